"""Connection-level HTTP limits for `serve_http`, nginx's defaults: what a slow or greedy
client may hold before it is answered and closed.

uvicorn's httptools protocol has a keep-alive timeout and a concurrency limit but no limit on
how long or how large a request head may be. `limited_protocol()` subclasses it:

    header_timeout    60 s     the whole request head (line and headers) must arrive within it
                               (nginx `client_header_timeout`)                       → 408
    body_timeout      60 s     each part of a body within this of the one before
                               (nginx `client_body_timeout`)                         → 408
    max_header_line   8 KiB    one header line, or the request line (nginx
                               `large_client_header_buffers` 4 8k)                   → 431 / 414
    max_header_bytes  32 KiB   the whole head                                        → 431
    max_headers       100      header fields                                         → 431
    max_connections   1000     open connections; one more is answered               → 503
                               (`serve_http` sizes it from the descriptor limit: `budget`)

Every refusal is a JSON-RPC error without an `id` (the request was never read: BASE-11), a
`Connection: close`, and for 503 a `Retry-After`. The body size limit (413) is the ASGI app's
(`max_body_size`); so is its body timeout when the app is mounted elsewhere. A connection
idle for uvicorn's keep-alive timeout (`keep_alive_timeout`) after its last response is
closed (within a second more).

The request path pays a few attribute writes per request (header lines are measured only
when the head is longer than one line may be). The timers, keep-alive included, are one
sweep per second over the open connections, not a timer per request: uvicorn arms and
cancels one per response, which costs more than the rest of this module's work per request.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ...protocol.errors import InvalidRequest, MCPError, ServerBusy
from ...protocol.jsonrpc import encode_unread_error
from .asgi import too_slow
from .budget import RefusalLog

log = logging.getLogger("mcpkit.http")

LINGER_SECONDS = 2.0
_BASE = HttpToolsProtocol
_REASONS = {
    408: b"Request Timeout",
    414: b"URI Too Long",
    431: b"Request Header Fields Too Large",
    503: b"Service Unavailable",
}


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """The connection-level limits (seconds, bytes, counts); None turns one off."""

    header_timeout: float | None = 60.0
    body_timeout: float | None = 60.0
    max_header_line: int = 8 * 1024
    max_header_bytes: int = 32 * 1024
    max_headers: int = 100
    max_connections: int | None = 1000
    retry_after: int = 5


def refusal(status: int, error: MCPError, retry_after: int | None = None) -> bytes:
    """A whole HTTP/1.1 response refusing a request that was never read, and closing."""
    body = encode_unread_error(error)
    head = [
        b"HTTP/1.1 %d %s\r\n" % (status, _REASONS[status]),
        b"content-type: application/json\r\n",
        b"content-length: %d\r\n" % len(body),
        b"connection: close\r\n",
    ]
    if retry_after is not None:
        head.append(b"retry-after: %d\r\n" % retry_after)
    return b"".join([*head, b"\r\n", body])


class _Answered:
    """Stands in for the request cycle of a refused head (see `refuse`)."""

    response_started = response_complete = True
    more_body = keep_alive = disconnected = False

    class message_event:  # the attribute uvicorn sets on a lost connection
        @staticmethod
        def set() -> None:
            return None


_ANSWERED = _Answered()


class LimitedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with request-head limits and a connection cap."""

    limits: ClassVar[HttpLimits] = HttpLimits()
    #: Set when the server drains: each request still arriving on an open connection is
    #: answered with `Connection: close`, so the peer (a proxy) takes its next one elsewhere.
    draining: ClassVar[bool] = False
    #: The per-loop sweeper of slow heads (one per server), while connections are open.
    _sweeping: ClassVar[dict[asyncio.AbstractEventLoop, asyncio.TimerHandle]] = {}
    #: Connections refused over capacity: one log line per interval, with their count.
    refusals: ClassVar[RefusalLog] = RefusalLog(log, "connection")

    # Per connection: when the current request head started (None: not reading a head),
    # bytes received while reading it, and whether this connection has been refused.
    _head_since: float | None
    _head_bytes: int
    _body_since: float | None  # the last progress of a body (arriving while cycle.more_body)
    _idle_since: float | None  # the last response, while no next request has begun
    _refused: bool
    _over_capacity: bool

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_since = self.loop.time()
        self._head_bytes = 0
        self._body_since = None
        self._idle_since = None
        self._refused = False
        cap = self.limits.max_connections
        self._over_capacity = cap is not None and len(self.connections) > cap
        if self.loop not in self._sweeping:  # keep-alive is timed there too
            self._schedule_sweep(self.loop, self.connections)

    # The two callbacks below run for every request: they call the base class by name (not
    # `super()`), measure header lines only when the head is longer than one line may be, and
    # leave the rare checks to `_refused_head`. Bodies are timed here too (data arriving while
    # the request's body is incomplete), so no per-body-chunk callback is overridden.
    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._head_since is None:
            cycle = self.cycle
            self._idle_since = None
            if cycle is not None and cycle.more_body and self._body_since is not None:
                self._body_since = self.loop.time()  # more of a body
                _BASE.data_received(self, data)
                return
            self._head_since = self.loop.time()  # the first bytes of the next request
            self._head_bytes = len(data)
        else:
            self._head_bytes += len(data)
        _BASE.data_received(self, data)
        if (
            self._head_since is not None
            and self._head_bytes > self.limits.max_header_bytes
            and not self._refused
        ):
            self.refuse(431, InvalidRequest("Request header fields too large"))

    def on_headers_complete(self) -> None:
        if self._refused:
            return
        self._head_since = None
        limits = self.limits
        if (
            self._head_bytes > limits.max_header_line  # only such a head can hold a long line
            or len(self.headers) > limits.max_headers
            or self._over_capacity
        ) and self._refused_head(limits):
            return
        self._body_since = self.loop.time()
        _BASE.on_headers_complete(self)
        if self.draining:
            self.cycle.keep_alive = False

    def on_response_complete(self) -> None:
        """As uvicorn's, but an idle connection is left for the sweep to close after the
        keep-alive timeout, instead of a timer armed here and cancelled by the next request."""
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self.flow.resume_reading()
        if self.pipeline:  # a request that arrived while this one was answered: start it
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
        elif self.timeout_keep_alive <= 0:
            self.transport.close()
        else:
            self._idle_since = self.loop.time()

    def _refused_head(self, limits: HttpLimits) -> bool:
        """Refuse a head over a limit, or any head on a connection over capacity (True)."""
        line = limits.max_header_line
        if any(len(n) + len(v) > line for n, v in self.headers):
            self.refuse(431, InvalidRequest(f"A header line is over {line} bytes"))
        elif len(self.headers) > limits.max_headers:
            self.refuse(431, InvalidRequest(f"More than {limits.max_headers} header fields"))
        elif len(self.url) > line:
            self.refuse(414, InvalidRequest(f"The request line is over {line} bytes"))
        elif self._over_capacity:
            self.refusals.refused(
                f"connection cap {limits.max_connections:,} reached; raise max_connections "
                "(mcpkit run --max-connections) and the descriptor limit (ulimit -n), or add "
                "instances"
            )
            busy = ServerBusy(
                "Too many open connections; try again later", retry_after=limits.retry_after
            )
            self.refuse(503, busy, limits.retry_after)
        else:  # a long head within the limits
            return False
        return True

    def _receiving_body(self) -> bool:
        cycle = self.cycle
        return (
            self._body_since is not None
            and cycle is not None
            and cycle.more_body
            and not cycle.response_complete
        )

    def refuse(self, status: int, error: MCPError, retry_after: int | None = None) -> None:
        """Answer `status` on the socket (unless a response has begun) and close. Like nginx's
        lingering close, what the client is still sending is read and dropped for a moment
        after our answer, so that it is not reset before it could read it."""
        self._refused = True
        self._head_since = self._body_since = None
        cycle = self.cycle
        transport = self.transport
        if cycle is None or cycle.response_complete or not cycle.response_started:
            transport.write(refusal(status, error, retry_after))
        if cycle is None or cycle.response_complete:
            # Refused between requests (a head): uvicorn's body callbacks, which may still
            # run for the rest of this read, find a request already answered and drop it.
            self.cycle = _ANSWERED  # type: ignore[assignment]
        if transport.can_write_eof():
            transport.write_eof()
            self.loop.call_later(LINGER_SECONDS, transport.close)
        else:
            transport.close()

    @classmethod
    def _schedule_sweep(cls, loop: asyncio.AbstractEventLoop, connections: set[Any]) -> None:
        cls._sweeping[loop] = loop.call_later(1.0, cls._sweep, loop, connections)

    @classmethod
    def _sweep(cls, loop: asyncio.AbstractEventLoop, connections: set[Any]) -> None:
        """408 for every connection whose request head, or body, has stalled for too long;
        connections idle past the keep-alive timeout are closed."""
        now = loop.time()
        head, body = cls.limits.header_timeout, cls.limits.body_timeout
        for conn in list(connections):
            if not isinstance(conn, LimitedHttpToolsProtocol) or conn._refused:
                continue
            idle = conn._idle_since
            if idle is not None and now - idle >= conn.timeout_keep_alive:
                if not conn.transport.is_closing():
                    conn.transport.close()
                continue
            since = conn._head_since
            if head is not None and since is not None and now - since >= head:
                conn.refuse(408, InvalidRequest(f"The request head took over {head:g} s"))
                continue
            since = conn._body_since
            if (
                body is not None
                and since is not None
                and now - since >= body
                and conn._receiving_body()
            ):
                conn.refuse(408, too_slow(body))
        if connections:
            cls._schedule_sweep(loop, connections)
        else:
            cls._sweeping.pop(loop, None)


def limited_protocol(limits: HttpLimits) -> type[LimitedHttpToolsProtocol]:
    """The protocol class uvicorn's `Config(http=...)` takes, with these limits."""
    return type(
        "LimitedHttpToolsProtocol",
        (LimitedHttpToolsProtocol,),
        {
            "limits": limits,
            "_sweeping": {},
            "draining": False,
            "refusals": RefusalLog(log, "connection"),
        },
    )
