"""MCP Apps (SEP-1865, extension `io.modelcontextprotocol/ui`, 2026-01-26) as the host sees
them, with no I/O: which tools the model and apps may use, where a tool's interface is, and
the Content-Security-Policy an app's document gets.

- A tool names its interface in `_meta.ui.resourceUri` (a `ui://` resource whose contents have
  MIME type `text/html;profile=mcp-app`); the deprecated flat `_meta["ui/resourceUri"]` is read
  too.
- `_meta.ui.visibility` (default `["model", "app"]`): a tool without `"model"` never reaches
  the model; a tool without `"app"` is refused to apps. An app calls only its own server.
- The CSP (`content_security_policy`): exactly the extension's restrictive default where the
  resource declares no `_meta.ui.csp` (a MUST); where it does, the declared domains (a value
  that is not a plain origin is dropped) plus workers and scripts from `blob:` and scripts
  from `data:` (what pdf.js needs to start its worker), never another origin. Each choice, and each way the reference
  host's policy (ext-apps `examples/basic-host/src/csp.ts`) differs, is commented there.
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
    #: Declared domains, only those that are plain origins; None: no `_meta.ui.csp` at all.
    csp: dict[str, list[str]] | None = None
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


def declared_domains(csp: Any) -> dict[str, list[str]] | None:
    """The `_meta.ui.csp` lists, keeping only values that are plain origins (None where the
    resource declares no policy: it gets the restrictive default)."""
    if not isinstance(csp, Mapping):
        return None
    out: dict[str, list[str]] = {}
    for key in _CSP_KEYS:
        values = csp.get(key)
        if isinstance(values, list):
            kept = [v.rstrip("/") for v in values if isinstance(v, str) and _ORIGIN.match(v)]
            if kept:
                out[key] = kept
    return out


#: The extension's "Restrictive Default" (SEP-1865 "Host Behavior"), for a resource that
#: declares no `_meta.ui.csp`: a MUST, so nothing is added to it. What follows only narrows
#: it (the host MAY further restrict): no plugins, nested frames, `<base>` elsewhere or form
#: posts. No `font-src` (it falls back to `default-src 'none'`, as in the default).
_DEFAULT = (
    "default-src 'none'",
    "script-src 'self' 'unsafe-inline'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "media-src 'self' data:",
    "connect-src 'none'",
    "frame-src 'none'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'none'",
)


def content_security_policy(csp: Mapping[str, list[str]] | None) -> str:
    """The policy for an app document: the restrictive default where the resource declares
    no policy (`csp` None); otherwise the spec's construction from the declared (already
    checked) domains, plus `blob:` for workers and scripts.

    Against the reference host (ext-apps basic-host `csp.ts`): it gives every app its
    loosened policy, also one that declares none; we refuse that (the default is a MUST).
    For a declared policy:
    - copied: `worker-src 'self' blob:` plus the resource domains (pdf.js, and the WebGL
      libraries it names, start workers from `blob:` URLs; without it the viewer stays
      blank), `blob:` in `script-src` (pdf.js's fallback loads the worker code as a module
      from a `blob:` URL) and in `img-src` (rendered pages shown through `blob:` URLs). A
      `blob:` URL holds only what the app's own code made, so no undeclared origin is let in.
    - added (not in the reference host): `data:` in `script-src`. The official PDF viewer's
      pdf.js loads its worker code from a `data:text/javascript` URL (inside its `blob:`
      worker, or in the page as its fallback) and stays blank without it. It gives the
      document no power it lacks: `'unsafe-inline'` (the spec's own) already runs any code
      written into the document, and a `data:` URL holds only what that code wrote.
    - refused: `'unsafe-eval'` (string-to-code; pdf.js runs without it), `default-src 'self' 'unsafe-inline'` (the
      spec's default is `'none'`), `connect-src 'self'` when no connect domain is declared
      (the spec: "empty or omitted = no external connections"), `base-uri 'none'` (the spec
      says `'self'`), `'wasm-unsafe-eval'` on a `wasmUnsafeEval` flag (not in the
      2026-01-26 spec), `blob:`/`data:` in `style-src`, `font-src` and `media-src` (no
      real app needed them).
    """
    if csp is None:
        return "; ".join(_DEFAULT)
    res = " ".join(csp.get("resourceDomains", []))
    connect = " ".join(csp.get("connectDomains", [])) or "'none'"
    frames = " ".join(csp.get("frameDomains", [])) or "'none'"
    base = " ".join(csp.get("baseUriDomains", [])) or "'self'"
    directives = [
        "default-src 'none'",
        f"script-src 'self' 'unsafe-inline' blob: data: {res}",
        f"worker-src 'self' blob: {res}",
        f"style-src 'self' 'unsafe-inline' {res}",
        f"img-src 'self' data: blob: {res}",
        f"font-src 'self' {res}",
        f"media-src 'self' data: {res}",
        f"connect-src {connect}",
        f"frame-src {frames}",
        "object-src 'none'",
        f"base-uri {base}",
        "form-action 'none'",
    ]
    return "; ".join(" ".join(d.split()) for d in directives)
