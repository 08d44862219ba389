"""Many MCP servers as one: `proxy(target)` forwards one server, `Gateway` serves a fleet from an
`mcpServers` file with the host's rules (namespaced names, consent, host-owned arguments,
pins, audit) to any MCP client; `mcpkit gateway --config mcp.json` runs one.

It sits above the server, the client and the host, and uses all three. Names load on first
use: `import mcpkit.gateway` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import GatewaySettings, StaticTokens, front_auth
    from .front import Front
    from .gateway import Gateway
    from .proxy import proxy

_EXPORTS = {
    "Front": "front",
    "Gateway": "gateway",
    "GatewaySettings": "config",
    "StaticTokens": "config",
    "front_auth": "config",
    "proxy": "proxy",
}

__all__ = ["Front", "Gateway", "GatewaySettings", "StaticTokens", "front_auth", "proxy"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit.gateway' has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
