"""OpenTelemetry for mcpkit: spans, metrics and trace context in `_meta` (`pip install
'mcpkit[otel]'`). Off by default; nothing here imports OpenTelemetry until it is turned on.

    server = Server("shop", telemetry=True)         # or MCPKIT_TELEMETRY=1
    client = Client(url, telemetry=True)
    host = Host(config, model=model, telemetry=True)

Spans and attributes follow the OpenTelemetry semantic conventions for MCP and GenAI
(`mcpkit.telemetry.semconv`); trace context travels in `_meta.traceparent` / `tracestate` /
`baggage` (W3C, BASE-53), so one trace runs from the model's tool call to the handler.
`span()` lets a handler add its own spans without importing OpenTelemetry itself.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from .config import ENV_TELEMETRY, Telemetry, TelemetryError, resolve
from .context import current_request

__all__ = ["ENV_TELEMETRY", "Telemetry", "TelemetryError", "resolve", "span"]


def span(name: str, **attributes: Any) -> AbstractContextManager[Any]:
    """A span around a block of a handler (`with span("db.lookup", table="orders"):`), the
    child of the request's span; nothing at all when OpenTelemetry is not in use."""
    scope = current_request.get()
    tracer = scope.tracer if scope is not None else None
    if tracer is None:
        if "opentelemetry.trace" not in sys.modules:
            return nullcontext()
        from opentelemetry import trace

        tracer = trace.get_tracer("mcpkit.app")
    return tracer.start_as_current_span(name, attributes=attributes or None)
