"""MCP client: `Client` talks to one server of either era over stdio, Streamable HTTP or in
process. `ClientSession` is the bare modern-era request layer underneath; `mcpkit.client.auth`
is the OAuth client.

Names load on first use (`__init__.pyi` lists them): `import mcpkit.client.errors` loads the
errors alone, not aiohttp or the rest of the client."""

from .._lazy import exports

__getattr__, __dir__, __all__ = exports(__name__, __file__)
