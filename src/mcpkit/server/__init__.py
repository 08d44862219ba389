"""Write MCP servers from type-hinted Python functions."""

from .caching import CacheHint
from .context import Context
from .server import Server
from .tools import Tool, ToolError

__all__ = ["CacheHint", "Context", "Server", "Tool", "ToolError"]
