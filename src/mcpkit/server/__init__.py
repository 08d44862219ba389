"""Write MCP servers from type-hinted Python functions.

Names load on first use (`__init__.pyi` lists them), so `import mcpkit.server` stays as cheap
as a server without handles, settings or the shipped middleware needs."""

from .._lazy import exports

__getattr__, __dir__, __all__ = exports(__name__, __file__)
