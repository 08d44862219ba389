"""Write MCP servers from type-hinted Python functions."""

from .caching import CacheHint
from .context import Context
from .handles import HandleError, HandleKind, Handles, MemoryHandleStore
from .middleware import Call, CallNext, Middleware
from .server import Server
from .settings import Settings
from .standard_middleware import RateLimit, RateLimited, ResponseSizeLimit, TimingLog
from .tasks import TaskStore
from .tools import Tool, ToolError, ToolTimeout

__all__ = [
    "CacheHint",
    "Call",
    "CallNext",
    "Context",
    "HandleError",
    "HandleKind",
    "Handles",
    "MemoryHandleStore",
    "Middleware",
    "RateLimit",
    "RateLimited",
    "ResponseSizeLimit",
    "Server",
    "Settings",
    "TaskStore",
    "TimingLog",
    "Tool",
    "ToolError",
    "ToolTimeout",
]
