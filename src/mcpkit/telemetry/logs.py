"""Structured logs: one JSON object per line on stderr, with the trace and request ids.

    MCPKIT_LOG_FORMAT=json mcpkit run server.py          # or Settings(log_format="json")

    {"time": "2026-12-01T10:00:00.123Z", "level": "warning", "logger": "mcpkit.server",
     "message": "...", "trace_id": "0af7...", "span_id": "00f0...", "request_id": 7,
     "mcp.method.name": "tools/call"}

`trace_id`/`span_id` are the current span's (telemetry on); `request_id` and the method are
the request being served (telemetry on, or JSON logs on: `request_scope` sets them). Anything
passed as `extra=` is included. No OpenTelemetry import: ids are read only if it is loaded.
This is the server's own log (stderr; stdout is the stdio transport's); MCP's
`notifications/message` (`ctx.log`) still goes to peers that ask for it.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from .context import RequestScope, current_request

__all__ = ["JsonFormatter", "json_handler", "request_scope"]

#: Attributes every LogRecord has: not copied as extras.
_STANDARD = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """A log record as one line of JSON (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        seconds = time.gmtime(record.created)
        millis = int(record.msecs)
        out: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", seconds) + f".{millis:03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if "opentelemetry.trace" in sys.modules:
            from opentelemetry import trace

            context = trace.get_current_span().get_span_context()
            if context.is_valid:
                out["trace_id"] = f"{context.trace_id:032x}"
                out["span_id"] = f"{context.span_id:016x}"
        scope = current_request.get()
        if scope is not None:
            out["request_id"] = scope.request.id
            out["mcp.method.name"] = scope.request.method
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in out:
                out[key] = value
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(out, default=str).decode()


def json_handler() -> logging.Handler:
    """A stderr handler writing `JsonFormatter` lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    return handler


async def request_scope(call: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """Middleware: the request's id and method in log records (when telemetry, which sets
    them itself, is off)."""
    token = current_request.set(RequestScope(call.request))
    try:
        return await call_next(call)
    finally:
        current_request.reset(token)
