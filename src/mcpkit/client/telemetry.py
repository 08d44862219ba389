"""The client's OpenTelemetry: one CLIENT span for every JSON-RPC request sent (either era, an
MRTR round or a task poll included), whose context goes to the server in `_meta` (BASE-53), and
the `mcp.client.operation.duration` histogram. Loaded only when telemetry is on:
`Client(target, telemetry=True)` or `MCPKIT_TELEMETRY=1`.

`TracedTransport` is a transport decorator: it implements the same contract around the
client's transport (the one place every request of the modern era goes through) and wraps the
channel of a 2025-11-25 session it opens, so the request path is untouched when telemetry is
off. Cache hits send nothing and make no span.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from ..protocol.jsonrpc import JSONObject, RequestId, Response
from ..protocol.transport import (
    NotificationSink,
    ServerRequestHandler,
    SessionChannel,
    TransportCapabilities,
)
from ..protocol.versions import META_PROTOCOL_VERSION
from ..telemetry.config import Telemetry
from ..telemetry.instruments import RequestInstruments, fail, result_outcome
from ..telemetry.propagation import inject
from ..telemetry.semconv import (
    ERROR_TYPE,
    MCP_PROTOCOL_VERSION,
    MCP_SESSION_ID,
    NETWORK_PROTOCOL_NAME,
    NETWORK_TRANSPORT,
    RPC_RESPONSE_STATUS_CODE,
    SERVER_ADDRESS,
    SERVER_PORT,
    metric_attributes,
    request_attributes,
)

if TYPE_CHECKING:
    from .transport import Transport

__all__ = ["ClientTelemetry", "Send", "TracedChannel", "TracedTransport"]

#: What a transport's `request` is: (id, method, params) -> the final response.
Send = Callable[[RequestId, str, JSONObject], Awaitable[Response]]


def _where(capabilities: TransportCapabilities) -> dict[str, Any]:
    """`network.transport`, and the server's address and port over HTTP."""
    url = capabilities.url
    if url is not None:
        parts = urlsplit(url)
        where: dict[str, Any] = {NETWORK_TRANSPORT: "tcp", NETWORK_PROTOCOL_NAME: "http"}
        if parts.hostname:
            where[SERVER_ADDRESS] = parts.hostname
            where[SERVER_PORT] = parts.port or (443 if parts.scheme == "https" else 80)
        return where
    if capabilities.kind == "stdio":
        return {NETWORK_TRANSPORT: "pipe"}
    return {}


class ClientTelemetry(RequestInstruments):
    """Spans and metrics of one client."""

    def __init__(
        self,
        config: Telemetry,
        capabilities: TransportCapabilities,
        session_version: Callable[[], str | None],
    ) -> None:
        super().__init__(config, "client")  # mcp.client.operation.duration, MRTR rounds
        #: The version of a 2025-11-25 session (its requests carry none in `_meta`).
        self.session_version = session_version
        self.where = _where(capabilities)

    def wrap(self, send: Send, session_id: Callable[[], str | None] | None = None) -> Send:
        """`send` with a span around each request and its context in the request's `_meta`."""

        async def request(request_id: RequestId, method: str, params: JSONObject) -> Response:
            name, attrs = request_attributes(method, request_id, params)
            attrs.update(self.where)
            meta = dict(params.get("_meta") or {})
            version = meta.get(META_PROTOCOL_VERSION) or self.session_version()
            if type(version) is str:
                attrs[MCP_PROTOCOL_VERSION] = version
            sid = session_id() if session_id is not None else None
            if sid is not None:
                attrs[MCP_SESSION_ID] = sid
            span = self.tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attrs)
            token = otel_context.attach(trace.set_span_in_context(span))
            started = time.perf_counter()
            try:
                inject(meta, baggage=self.config.baggage)
                response = await send(request_id, method, {**params, "_meta": meta})
            except (asyncio.CancelledError, Exception) as exc:
                fail(span, attrs, exc)
                raise
            else:
                self._outcome(span, attrs, response)
                return response
            finally:
                self.duration.record(time.perf_counter() - started, metric_attributes(attrs))
                otel_context.detach(token)
                span.end()

        return request

    def _outcome(self, span: Any, attrs: dict[str, Any], response: Response) -> None:
        error = response.error
        if error is not None:
            code = str(error.get("code"))
            extra = {ERROR_TYPE: code, RPC_RESPONSE_STATUS_CODE: code}
            attrs.update(extra)
            span.set_attributes(extra)
            span.set_status(Status(StatusCode.ERROR, str(error.get("message", ""))))
            return
        if type(response.result) is dict:
            result_outcome(span, attrs, response.result, self.rounds)


class TracedTransport:
    """A transport decorator: `inner` with a span around every request (and every request of
    a 2025-11-25 session it opens). Listen streams pass through untraced."""

    def __init__(self, inner: Transport, telemetry: ClientTelemetry) -> None:
        self.inner = inner
        self.telemetry = telemetry
        self._send = telemetry.wrap(inner.request)
        caps = inner.capabilities
        self.capabilities = replace(
            caps, open_session=self._open_session if caps.open_session is not None else None
        )

    async def start(self) -> None:
        await self.inner.start()

    async def request(self, request_id: RequestId, method: str, params: JSONObject) -> Response:
        return await self._send(request_id, method, params)

    async def close(self) -> None:
        await self.inner.close()

    def _open_session(
        self, on_request: ServerRequestHandler, on_notification: NotificationSink
    ) -> SessionChannel:
        opened = self.inner.capabilities.open_session
        assert opened is not None  # declared only when the inner transport declares it
        return TracedChannel(opened(on_request, on_notification), self.telemetry)


class TracedChannel:
    """A 2025-11-25 session's channel with a span around every request."""

    def __init__(self, inner: SessionChannel, telemetry: ClientTelemetry) -> None:
        self.inner = inner
        self._send = telemetry.wrap(inner.request, lambda: inner.session_id)

    @property
    def session_id(self) -> str | None:
        return self.inner.session_id

    async def request(self, request_id: RequestId, method: str, params: JSONObject) -> Response:
        return await self._send(request_id, method, params)

    async def notify(self, method: str, params: JSONObject | None) -> None:
        await self.inner.notify(method, params)

    def session_ready(self, version: str) -> None:
        self.inner.session_ready(version)

    async def open_stream(self) -> None:
        await self.inner.open_stream()

    async def end_session(self) -> None:
        await self.inner.end_session()

    def detach(self) -> None:
        self.inner.detach()
