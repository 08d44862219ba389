"""MCP Apps (SEP-1865, extension `io.modelcontextprotocol/ui`, 2026-01-26) as the host sees
them, with no I/O: which tools the model and apps may use, where a tool's interface is, and
the Content-Security-Policy an app's document gets.

- A tool names its interface in `_meta.ui.resourceUri` (a `ui://` resource whose contents have
  MIME type `text/html;profile=mcp-app`); the deprecated flat `_meta["ui/resourceUri"]` is read
  too.
- `_meta.ui.visibility` (default `["model", "app"]`): a tool without `"model"` never reaches
  the model; a tool without `"app"` is refused to apps. An app calls only its own server.
- The CSP is the extension's restrictive default plus the domains the resource declares in
  `_meta.ui.csp`, never more; a declared value that is not a plain origin is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

APPS_EXTENSION: Final = "io.modelcontextprotocol/ui"
APP_MIME: Final = "text/html;profile=mcp-app"
#: The version of the app ↔ host protocol this host speaks (`ui/initialize`).
APPS_PROTOCOL: Final = "2026-01-26"
#: What the host declares in its client capabilities (VER-07).
APPS_CAPABILITY: Final[dict[str, Any]] = {"mimeTypes": [APP_MIME]}

_DEFAULT_VISIBILITY = ("model", "app")
#: scheme://host[:port], the host possibly starting with `*.`; nothing that could end a
#: directive or add a keyword (quotes, `;`, `,`, spaces).
_ORIGIN = re.compile(r"^(https?|wss?)://(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?/?$")
_CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
#: Device permissions an app may ask for (recorded; this host grants none).
_PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")


def _ui_meta(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = tool.get("_meta")
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    return ui if isinstance(ui, Mapping) else {}


def visibility(tool: Mapping[str, Any]) -> tuple[str, ...]:
    """Who may use a tool (a wire definition): `model`, `app` or both (the default)."""
    value = _ui_meta(tool).get("visibility")
    if not isinstance(value, list):
        return _DEFAULT_VISIBILITY
    return tuple(v for v in value if v in _DEFAULT_VISIBILITY)


def for_model(tool: Mapping[str, Any]) -> bool:
    """The tool may be offered to the model (hosts MUST NOT list it otherwise)."""
    return "model" in visibility(tool)


def for_apps(tool: Mapping[str, Any]) -> bool:
    """An app of the tool's own server may call it."""
    return "app" in visibility(tool)


def resource_uri(tool: Mapping[str, Any]) -> str | None:
    """The `ui://` resource holding the tool's interface, if it has one."""
    uri = _ui_meta(tool).get("resourceUri")
    if uri is None:
        meta = tool.get("_meta")
        uri = meta.get("ui/resourceUri") if isinstance(meta, Mapping) else None  # deprecated
    return uri if isinstance(uri, str) and uri.startswith("ui://") else None


class AppResourceError(ValueError):
    """A `ui://` resource that cannot be shown as an app (one line, for the user)."""


@dataclass(frozen=True, slots=True)
class AppResource:
    """One app document, ready for the sandbox."""

    uri: str
    html: str
    #: Declared domains, only those that are plain origins.
    csp: dict[str, list[str]] = field(default_factory=dict)
    #: What it asked for; the host grants none of them.
    permissions: dict[str, Any] = field(default_factory=dict)
    prefers_border: bool | None = None

    def policy(self) -> str:
        return content_security_policy(self.csp)


def app_resource(uri: str, result: Mapping[str, Any]) -> AppResource:
    """The app in a `resources/read` result (the content item for `uri`, MIME type
    `text/html;profile=mcp-app`, text or base64 blob)."""
    import base64
    import binascii

    contents = result.get("contents")
    items = [c for c in contents if isinstance(c, Mapping)] if isinstance(contents, list) else []
    item = next((c for c in items if c.get("uri") == uri), items[0] if items else None)
    if item is None:
        raise AppResourceError(f"{uri}: the server returned no contents")
    mime = str(item.get("mimeType") or "").replace(" ", "").lower()
    if mime != APP_MIME:
        raise AppResourceError(f"{uri}: MIME type {item.get('mimeType')!r} is not {APP_MIME}")
    if isinstance(item.get("text"), str):
        html = item["text"]
    elif isinstance(item.get("blob"), str):
        try:
            html = base64.b64decode(item["blob"], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise AppResourceError(f"{uri}: the blob is not base64-encoded UTF-8") from None
    else:
        raise AppResourceError(f"{uri}: the contents have neither text nor blob")
    meta = item.get("_meta")
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    ui = ui if isinstance(ui, Mapping) else {}
    border = ui.get("prefersBorder")
    permissions = ui.get("permissions")
    return AppResource(
        uri,
        html,
        declared_domains(ui.get("csp")),
        {k: {} for k in permissions if k in _PERMISSIONS}
        if isinstance(permissions, Mapping)
        else {},
        border if isinstance(border, bool) else None,
    )


def declared_domains(csp: Any) -> dict[str, list[str]]:
    """The `_meta.ui.csp` lists, keeping only values that are plain origins."""
    if not isinstance(csp, Mapping):
        return {}
    out: dict[str, list[str]] = {}
    for key in _CSP_KEYS:
        values = csp.get(key)
        if isinstance(values, list):
            kept = [v.rstrip("/") for v in values if isinstance(v, str) and _ORIGIN.match(v)]
            if kept:
                out[key] = kept
    return out


def content_security_policy(csp: Mapping[str, list[str]]) -> str:
    """The policy for an app document: the extension's restrictive default, widened only by
    the declared (already checked) domains."""
    res = " ".join(csp.get("resourceDomains", []))
    connect = " ".join(csp.get("connectDomains", [])) or "'none'"
    frames = " ".join(csp.get("frameDomains", [])) or "'none'"
    base = " ".join(csp.get("baseUriDomains", [])) or "'self'"
    directives = [
        "default-src 'none'",
        f"script-src 'self' 'unsafe-inline' {res}",
        f"style-src 'self' 'unsafe-inline' {res}",
        f"img-src 'self' data: {res}",
        f"font-src 'self' {res}",
        f"media-src 'self' data: {res}",
        f"connect-src {connect}",
        f"frame-src {frames}",
        "object-src 'none'",
        f"base-uri {base}",
        "form-action 'none'",
    ]
    return "; ".join(" ".join(d.split()) for d in directives)
