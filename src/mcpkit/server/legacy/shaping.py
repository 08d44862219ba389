"""2025-11-25 wire shapes: strip what only 2026-07-28 results carry, map errors to legacy codes.

Pure functions, no I/O. Results produced by the era-neutral handlers carry `resultType`,
`ttlMs`, `cacheScope` and `_meta["io.modelcontextprotocol/serverInfo"]`; none of these belong on
the session wire (CHECKLIST B.1.5, B.4 "Results"), so they are removed here. Nothing is
modified in place: handler results may share dicts with caches.
"""

from __future__ import annotations

from typing import Any

from ...protocol.errors import LEGACY_RESOURCE_NOT_FOUND, MCPError, ResourceNotFound
from ...protocol.versions import META_SERVER_INFO

#: Result members that exist only on the 2026-07-28 wire.
MODERN_ONLY_KEYS = frozenset({"resultType", "ttlMs", "cacheScope"})


def legacy_result(result: dict[str, Any]) -> dict[str, Any]:
    """A modern result dict as the 2025-11-25 schema wants it (a new dict)."""
    if result.get("resultType") == "input_required":
        # B.1.5: legacy clients never get InputRequiredResult. Handlers reach the client through
        # LegacyInputs, so this only happens when a handler raised InputRequired by hand.
        raise MCPError("This request needs input the 2025-11-25 wire cannot ask for this way")
    out = {k: v for k, v in result.items() if k not in MODERN_ONLY_KEYS}
    if "structuredContent" in out and not isinstance(out["structuredContent"], dict):
        del out["structuredContent"]  # 2025-11-25: an object only (the text content stays)
    meta = out.get("_meta")
    if isinstance(meta, dict) and META_SERVER_INFO in meta:
        rest = {k: v for k, v in meta.items() if k != META_SERVER_INFO}
        if rest:
            out["_meta"] = rest
        else:
            del out["_meta"]
    return out


def legacy_page(method: str, page: dict[str, Any]) -> dict[str, Any]:
    """A list page for the session wire: 2025-11-25 output schemas describe objects only, so a
    tool whose result is another JSON value (allowed since 2026-07-28) is listed without one."""
    if method != "tools/list":
        return page
    tools = [
        {k: v for k, v in t.items() if k != "outputSchema"}
        if isinstance(t.get("outputSchema"), dict) and t["outputSchema"].get("type") != "object"
        else t
        for t in page["tools"]
    ]
    return {**page, "tools": tools}


def legacy_error(exc: MCPError) -> MCPError:
    """The error as sent on the session wire: -32002 for an unknown resource (RES-14)."""
    if isinstance(exc, ResourceNotFound):
        return MCPError(exc.message, exc.data, code=LEGACY_RESOURCE_NOT_FOUND)
    return exc
