"""Write MCP servers from type-hinted Python functions.

Handles, settings and the shipped middleware load on first use (`import mcpkit.server` stays
as cheap as a server without them needs)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .admission import Era, Refused, ServerRequest
from .caching import CacheHint
from .context import Context
from .middleware import Call, CallNext, Middleware
from .server import Server
from .tasks import TaskStore
from .tools import Tool, ToolError, ToolTimeout

if TYPE_CHECKING:
    from .handles import HandleError, HandleKind, Handles, MemoryHandleStore
    from .settings import Settings
    from .standard_middleware import RateLimit, RateLimited, ResponseSizeLimit, TimingLog

_LAZY = {
    "HandleError": ".handles",
    "HandleKind": ".handles",
    "Handles": ".handles",
    "MemoryHandleStore": ".handles",
    "RateLimit": ".standard_middleware",
    "RateLimited": ".standard_middleware",
    "ResponseSizeLimit": ".standard_middleware",
    "Settings": ".settings",
    "TimingLog": ".standard_middleware",
}

__all__ = [
    "CacheHint",
    "Call",
    "CallNext",
    "Context",
    "Era",
    "HandleError",
    "HandleKind",
    "Handles",
    "MemoryHandleStore",
    "Middleware",
    "RateLimit",
    "RateLimited",
    "Refused",
    "ResponseSizeLimit",
    "Server",
    "ServerRequest",
    "Settings",
    "TaskStore",
    "TimingLog",
    "Tool",
    "ToolError",
    "ToolTimeout",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit.server' has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value
