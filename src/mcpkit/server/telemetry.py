"""The server's OpenTelemetry: one SERVER span and the request metrics for every request, as the
outermost link of the middleware chain (so middleware and handler run inside the span, and
whatever the handler does joins the trace). Loaded only when telemetry is on:
`Server(telemetry=True)` or `MCPKIT_TELEMETRY=1`.

The span's parent is the trace context the client put in `_meta` (BASE-53); an enclosing span
(an instrumented ASGI stack) becomes a link. Without valid context in `_meta`, the enclosing
span (if any) is the parent. Metrics:

| name | kind | what |
|---|---|---|
| `mcp.server.operation.duration` | histogram, s | every request, by method, tool or prompt, outcome (`error.type`) |
| `mcpkit.server.active_requests` | observed | requests being handled, by method |
| `mcpkit.server.mrtr.rounds` | counter | requests answered `input_required` (MRTR), by method and tool |
| `mcpkit.server.listen_streams` | observed | open `subscriptions/listen` streams |
| `mcpkit.server.sessions` | observed | live 2025-11-25 sessions |
| `mcpkit.server.tasks` | observed | tasks held, by status |
| `mcp.server.session.duration` | histogram, s | 2025-11-25 sessions, from `initialize` to their end |

The count of requests is the histogram's count (`_count` in Prometheus).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.trace import Link, SpanKind

from ..protocol.errors import MCPError
from ..telemetry.config import Telemetry
from ..telemetry.context import RequestScope, current_request, current_transport
from ..telemetry.instruments import (
    RequestInstruments,
    ambient,
    fail,
    failed_as,
    histogram,
    result_outcome,
)
from ..telemetry.propagation import extract
from ..telemetry.semconv import (
    MCP_METHOD_NAME,
    MCP_PROTOCOL_VERSION,
    MCP_SESSION_ID,
    NETWORK_TRANSPORT,
    RPC_RESPONSE_STATUS_CODE,
    SERVER_ACTIVE_REQUESTS,
    SERVER_LISTEN_STREAMS,
    SERVER_SESSION_DURATION,
    SERVER_SESSIONS,
    SERVER_TASKS,
    metric_attributes,
    request_attributes,
)

if TYPE_CHECKING:
    from .middleware import Call, CallNext
    from .server import Server

__all__ = ["ServerTelemetry"]

_INTERNAL = "-32603"  # what a client gets for an unexpected exception


class ServerTelemetry(RequestInstruments):
    """Spans and metrics of one server (see the module docstring)."""

    def __init__(self, server: Server, config: Telemetry) -> None:
        super().__init__(config, "server")  # mcp.server.operation.duration, MRTR rounds
        self.server = server
        meter = self.meter
        #: Requests being handled, by method: plain counts, read when metrics are collected
        #: (an SDK measurement costs microseconds; two per request would double the cost).
        self.in_flight: dict[str, int] = {}
        meter.create_observable_up_down_counter(
            SERVER_ACTIVE_REQUESTS,
            [self._active],
            unit="{request}",
            description="Requests being handled",
        )
        self.session_duration = histogram(
            meter, SERVER_SESSION_DURATION, "How long 2025-11-25 sessions lasted"
        )
        #: Live session counts, one callable per transport that keeps sessions.
        self.session_counts: list[Callable[[], int]] = []
        meter.create_observable_up_down_counter(
            SERVER_LISTEN_STREAMS,
            [self._streams],
            unit="{stream}",
            description="Open subscriptions/listen streams",
        )
        meter.create_observable_up_down_counter(
            SERVER_SESSIONS, [self._sessions], unit="{session}", description="Live sessions"
        )
        meter.create_observable_up_down_counter(
            SERVER_TASKS, [self._tasks], unit="{task}", description="Tasks held, by status"
        )

    # -- observed metrics (read when collected, never on the request path) -------------------
    def _active(self, options: CallbackOptions) -> Iterable[Observation]:
        return [
            Observation(n, {MCP_METHOD_NAME: method}) for method, n in list(self.in_flight.items())
        ]

    def _streams(self, options: CallbackOptions) -> Iterable[Observation]:
        return [Observation(len(self.server.subscriptions))]

    def _sessions(self, options: CallbackOptions) -> Iterable[Observation]:
        return [Observation(sum(count() for count in self.session_counts))]

    def _tasks(self, options: CallbackOptions) -> Iterable[Observation]:
        counts = self.server.tasks.count_by_status()
        return [Observation(n, {"mcpkit.task.status": status}) for status, n in counts.items()]

    # -- the middleware ------------------------------------------------------------------------
    def __call__(self, call: Call, call_next: CallNext) -> Awaitable[Any]:
        scope = current_request.get()
        if scope is not None and scope.request is call.request:
            return call_next(call)  # a session's request, observed by the session already
        return self.observe(call.request, call_next(call))

    async def observe(
        self, request: Any, work: Awaitable[Any], session_id: str | None = None
    ) -> Any:
        """Await `work`, the answer to `request`, inside its span (either era)."""
        params = request.params
        name, attrs = request_attributes(request.method, request.id, params)
        attrs[MCP_PROTOCOL_VERSION] = request.meta.protocol_version
        transport = current_transport.get()
        if transport is not None:
            attrs[NETWORK_TRANSPORT] = transport
        if session_id is not None:
            attrs[MCP_SESSION_ID] = session_id
        parent = links = None
        meta = params.get("_meta") if params else None
        if type(meta) is dict:
            parent = extract(meta)
            outer = ambient() if parent is not None else None
            if outer is not None:  # the transport's own span: linked, not the parent
                links = [Link(trace.get_current_span(outer).get_span_context())]
        span = self.tracer.start_span(name, parent, SpanKind.SERVER, attrs, links)
        token = otel_context.attach(trace.set_span_in_context(span, parent))
        scope = current_request.set(RequestScope(request, self.tracer))
        method = request.method
        in_flight = self.in_flight
        in_flight[method] = in_flight.get(method, 0) + 1
        started = time.perf_counter()
        try:
            result = await work
        except (asyncio.CancelledError, MCPError) as exc:
            fail(span, attrs, exc)
            raise
        except Exception as exc:
            span.record_exception(exc)
            failed_as(span, attrs, _INTERNAL, "Internal error")
            attrs[RPC_RESPONSE_STATUS_CODE] = _INTERNAL
            span.set_attribute(RPC_RESPONSE_STATUS_CODE, _INTERNAL)
            raise
        else:
            if type(result) is dict:
                result_outcome(span, attrs, result, self.rounds)
            return result
        finally:
            in_flight[method] -= 1
            self.duration.record(time.perf_counter() - started, metric_attributes(attrs))
            current_request.reset(scope)
            otel_context.detach(token)
            span.end()

    def refused(self, request: Any, exc: MCPError, session_id: str | None) -> None:
        """A request the front door refused (bad `_meta`, version, headers, shape): a span and
        a duration like any other, failed with the error's code."""
        params = request.params if type(request.params) is dict else None
        name, attrs = request_attributes(request.method, request.id, params)
        transport = current_transport.get()
        if transport is not None:
            attrs[NETWORK_TRANSPORT] = transport
        if session_id is not None:
            attrs[MCP_SESSION_ID] = session_id
        meta = params.get("_meta") if params else None
        parent = extract(meta) if type(meta) is dict else None
        span = self.tracer.start_span(name, parent, SpanKind.SERVER, attrs)
        fail(span, attrs, exc)
        span.end()
        self.duration.record(0.0, metric_attributes(attrs))

    def initialize(self, session_id: str, params: Any, run: Callable[[], Any]) -> Any:
        """A 2025-11-25 `initialize`, which opens session `session_id`: `run()` inside a span."""
        attrs: dict[str, Any] = {MCP_METHOD_NAME: "initialize", MCP_SESSION_ID: session_id}
        transport = current_transport.get()
        if transport is not None:
            attrs[NETWORK_TRANSPORT] = transport
        version = params.get("protocolVersion") if type(params) is dict else None
        if type(version) is str:
            attrs[MCP_PROTOCOL_VERSION] = version
        meta = params.get("_meta") if type(params) is dict else None
        parent = extract(meta) if type(meta) is dict else None
        started = time.perf_counter()
        with self.tracer.start_as_current_span(
            "initialize", parent, SpanKind.SERVER, attrs, record_exception=False
        ) as span:
            try:
                return run()
            except MCPError as exc:
                fail(span, attrs, exc)
                raise
            finally:
                self.duration.record(time.perf_counter() - started, metric_attributes(attrs))

    def session_ended(self, seconds: float) -> None:
        self.session_duration.record(seconds)
