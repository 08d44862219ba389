"""Names and URIs of one server shown inside another (`Server.mount`, the gateway). No I/O.

- Tools and prompts: `{prefix}__{name}` (`billing__create_invoice`), the shape the host gives
  its model (`server__tool`), so a server mounted in process and the same server behind
  `mcpkit gateway` show the same names.
- Resources and templates: the prefix goes in front of the URI's scheme, joined by `+`
  (`file:///report.txt` → `billing+file:///report.txt`; `notes://{id}` →
  `billing+notes://{id}`). The result is still a URI (RFC 3986 allows `+` in a scheme), it
  says where it leads, and it no longer claims to be something a client could fetch itself:
  `https://...` or `file://...` of a server behind a gateway is that server's, not the
  client's (a path-style prefix, `https://billing/...`, would point at a host named billing).
  The URI prefix is the name lowercased with characters a scheme cannot hold turned into
  `-`; splitting at the first `+` gives it back, so nested mounts nest (`a+b+file:///x`).
- MCP Apps' `ui://` resources stay `ui://` (hosts show only those, SEP-1865): the prefix goes
  in front of the authority instead (`ui://shipping/card` → `ui://billing+shipping/card`), and
  a tool's `_meta.ui.resourceUri` follows (`with_ui_uri`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

#: Between a prefix and a tool or prompt name.
SEPARATOR = "__"
_SCHEME_BAD = re.compile(r"[^a-z0-9.-]")
_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
_UI = "ui://"


def check_prefix(prefix: str) -> str:
    """A mount prefix: a letter, then letters, digits, `_` or `-` (at most 64)."""
    if not isinstance(prefix, str) or not _PREFIX.match(prefix):
        raise ValueError(
            f"invalid prefix {prefix!r}: start with a letter, then letters, digits, '_' or '-'"
        )
    return prefix


def uri_prefix(name: str) -> str:
    """The scheme-safe form of a prefix (`Billing_EU` → `billing-eu`)."""
    scheme = _SCHEME_BAD.sub("-", name.lower())
    return scheme if scheme[:1].isalpha() else "s" + scheme


def prefix_name(prefix: str, name: str) -> str:
    return f"{prefix}{SEPARATOR}{name}"


def unprefix_name(prefix: str, name: str) -> str | None:
    """The inner name of `name` when it carries `prefix`, else None."""
    head = prefix + SEPARATOR
    return name[len(head) :] if name.startswith(head) and len(name) > len(head) else None


def prefix_uri(prefix: str, uri: str) -> str:
    """`uri` (or a URI template) as seen through the mount `prefix` (already `uri_prefix`ed)."""
    if uri.startswith(_UI):
        return f"{_UI}{prefix}+{uri[len(_UI) :]}"
    return f"{prefix}+{uri}"


def split_uri(uri: str) -> tuple[str, str] | None:
    """(uri prefix, inner URI) of a prefixed URI, else None. The prefix is compared lowercased
    (schemes are case-insensitive)."""
    scheme = _UI if uri.startswith(_UI) else ""
    head, plus, rest = uri[len(scheme) :].partition("+")
    if not plus or not rest or ":" in head or "/" in head:
        return None
    return head.lower(), scheme + rest


def with_ui_uri(definition: dict[str, Any], convert: Callable[[str], str]) -> dict[str, Any]:
    """A tool definition whose MCP App resource (`_meta.ui.resourceUri`, or the deprecated
    `_meta["ui/resourceUri"]`) is `convert`ed; others unchanged (the same object)."""
    meta = definition.get("_meta")
    if not isinstance(meta, dict):
        return definition
    ui = meta.get("ui")
    if isinstance(ui, dict) and isinstance(ui.get("resourceUri"), str):
        meta = {**meta, "ui": {**ui, "resourceUri": convert(ui["resourceUri"])}}
    if isinstance(meta.get("ui/resourceUri"), str):
        meta = {**meta, "ui/resourceUri": convert(meta["ui/resourceUri"])}
    return {**definition, "_meta": meta} if meta is not definition["_meta"] else definition
