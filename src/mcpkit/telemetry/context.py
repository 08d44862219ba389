"""The request being served, for log records and handler spans. No OpenTelemetry import: the
log formatter reads it whether or not tracing is on."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

__all__ = ["RequestScope", "current_request", "current_transport"]


class RequestScope:
    """What the server's telemetry knows of the request this task is serving."""

    __slots__ = ("request", "tracer")

    def __init__(self, request: Any, tracer: Any = None) -> None:
        #: The request (`id`, `method`, ...) as the server admitted it.
        self.request = request
        #: The tracer of the server's telemetry: `mcpkit.telemetry.span()` uses it, so a
        #: handler's spans go where the server's go.
        self.tracer = tracer


current_request: ContextVar[RequestScope | None] = ContextVar("mcpkit_request", default=None)

#: How the request arrived: "pipe" (stdio) or "tcp" (HTTP), set by the transport
#: (`network.transport`); None where it does not say (in process).
current_transport: ContextVar[str | None] = ContextVar("mcpkit_transport", default=None)
