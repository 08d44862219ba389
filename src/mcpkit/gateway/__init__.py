"""Many MCP servers as one: `proxy(target)` forwards one server, `Gateway` serves a fleet from an
`mcpServers` file with the host's rules (namespaced names, consent, host-owned arguments,
pins, audit) to any MCP client; `mcpkit gateway --config mcp.json` runs one.

It sits above the server, the client and the host, and uses all three. Names load on first
use (`__init__.pyi` lists them): `import mcpkit.gateway` stays cheap.
"""

from .._lazy import exports

__getattr__, __dir__, __all__ = exports(__name__, __file__)
