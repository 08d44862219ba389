"""Write MCP servers from type-hinted Python functions."""

from .admission import Era, Refused, ServerRequest
from .caching import CacheHint
from .context import Context
from .server import Server
from .tasks import TaskStore
from .tools import Tool, ToolError

__all__ = [
    "CacheHint",
    "Context",
    "Era",
    "Refused",
    "Server",
    "ServerRequest",
    "TaskStore",
    "Tool",
    "ToolError",
]
