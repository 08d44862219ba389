"""The one module that reaches into uvicorn beyond its public `Config` and `Server.run`:
everything here depends on uvicorn's internals, and nothing else in mcpkit does.

Written for uvicorn `SUPPORTED` (>= 0.54, < 0.55; tests/test_uvicorn_adapter.py fails when
the installed uvicorn leaves that range, and `serve_http` then serves with uvicorn's own h11
protocol, head limits off, and says so in one line). What it relies on:

- `uvicorn.protocols.http.httptools_impl.HttpToolsProtocol` (private): subclassed by
  `LimitedHttpToolsProtocol` for the request-head limits and the connection cap of
  `http_limits` (its `cycle`, `headers`, `url`, `pipeline`, `flow`, `server_state`,
  `timeout_keep_alive`, `_start_asgi_task`, `_unsupported_upgrade_warning`);
- `uvicorn.Server`: `DrainingServer` overrides `startup`, `shutdown` and `handle_exit` to
  drain before uvicorn closes (the drain itself is the caller's, through `Lifecycle`), and
  reads `servers` and `server_state.connections`; `NotifyingServer` (the web UI's) overrides
  `handle_exit` to tell its owner the moment a stop is asked for;
- the request cycle of a connection (`cycle.response_complete`, `cycle.keep_alive`) of both
  uvicorn protocols, to close kept-alive connections after their current response.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ...protocol.errors import InvalidRequest, MCPError, ServerBusy
from .asgi import too_slow
from .budget import RefusalLog
from .http_limits import LINGER_SECONDS, HttpLimits, refusal

log = logging.getLogger("mcpkit.http")

#: The uvicorn versions this adapter was written for: [low, high).
SUPPORTED = ((0, 54), (0, 55))
_BASE = HttpToolsProtocol


def uvicorn_version() -> tuple[int, ...]:
    """The installed uvicorn's version, its numeric leading parts (0.54.0 -> (0, 54, 0)).

    Read from `uvicorn.__version__`, not `importlib.metadata` (which loads the `email`
    parsers, about 0.3 MB, into every HTTP server for one string)."""
    parts = []
    for part in uvicorn.__version__.split("."):
        if not part.isdigit():
            break
        parts.append(int(part))
    return tuple(parts)


def supported(installed: tuple[int, ...] | None = None) -> bool:
    """Whether `installed` (default: the installed uvicorn) is within `SUPPORTED`."""
    low, high = SUPPORTED
    installed = uvicorn_version() if installed is None else installed
    return low <= installed < high


def unsupported_line() -> str:
    """The one line `serve_http` logs when the installed uvicorn is outside `SUPPORTED`."""
    low, high = (".".join(map(str, v)) for v in SUPPORTED)
    have = ".".join(map(str, uvicorn_version()))
    return (
        f"uvicorn {have} is outside the range mcpkit's HTTP limits were written for "
        f"(>= {low}, < {high}): serving without request-head limits; install "
        f"'uvicorn>={low},<{high}' or a newer mcpkit"
    )


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

    def _unsupported_upgrade_warning(self) -> None:
        """uvicorn's two warnings for an Upgrade request (one of them telling the operator to
        install a WebSocket library) would mislead: the server runs with `ws="none"` on
        purpose, and the request is served as plain HTTP. One debug line instead."""
        log.debug("an Upgrade request is served as plain HTTP (MCP has no WebSocket transport)")

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


def protocol_for(limits: HttpLimits) -> type[LimitedHttpToolsProtocol] | None:
    """The protocol class for `Config(http=...)` with these limits; None (serve with uvicorn's
    h11, and say so in one line) when the installed uvicorn is outside `SUPPORTED`."""
    if supported():
        return limited_protocol(limits)
    log.warning("%s", unsupported_line())
    return None


class Lifecycle(Protocol):
    """What `DrainingServer` asks of its owner (`http_serve`): no uvicorn in it."""

    def started(self) -> None:
        """Listening."""

    def stop_now(self) -> None:
        """A second Ctrl-C while draining: stop at once (runs on the event loop)."""

    async def drain(self, server: DrainingServer, sockets: list[socket.socket] | None) -> None:
        """Drain before uvicorn closes what is left (`stop_accepting`, `open_connections`)."""


class DrainingServer(uvicorn.Server):
    """uvicorn's server, draining before it shuts down. The first SIGINT or SIGTERM begins
    `lifecycle.drain`; a second Ctrl-C calls `lifecycle.stop_now`."""

    def __init__(
        self,
        config: uvicorn.Config,
        lifecycle: Lifecycle,
        protocol: type[LimitedHttpToolsProtocol] | None,
    ) -> None:
        super().__init__(config)
        self.lifecycle = lifecycle
        self.protocol = protocol
        self.loop: asyncio.AbstractEventLoop | None = None
        #: The signal that began the stop (SIGINT: a person at a keyboard), None before.
        self.stop_signal: int | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        await super().startup(sockets)
        self.lifecycle.started()

    def handle_exit(self, sig: int, frame: Any) -> None:
        if self.should_exit and sig == signal.SIGINT:  # the second Ctrl-C: stop now
            loop = self.loop
            if loop is None or loop.is_closed():
                os._exit(130)
            loop.call_soon_threadsafe(self.lifecycle.stop_now)
            return
        if self.stop_signal is None:
            self.stop_signal = sig
        super().handle_exit(sig, frame)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await self.lifecycle.drain(self, sockets)
        await super().shutdown(sockets)  # closes what is left, then the lifespan ends

    def open_connections(self) -> int:
        return len(self.server_state.connections)

    def stop_accepting(self, sockets: list[socket.socket] | None) -> None:
        """Accept no more connections (a proxy takes new ones elsewhere); each open one
        closes after its current response, idle ones at once."""
        for listener in self.servers:
            listener.close()
        for sock in sockets or []:
            sock.close()
        protocol = self.protocol
        if protocol is not None:
            protocol.draining = True  # the next request on an open connection closes it
        kinds = _protocol_classes()
        for connection in list(self.server_state.connections):
            cycle = connection.cycle if isinstance(connection, kinds) else None
            if cycle is not None and not cycle.response_complete:
                cycle.keep_alive = False
            elif protocol is None:
                connection.shutdown()  # without the flag, idle connections close now


class NotifyingServer(uvicorn.Server):
    """uvicorn's server, calling `on_exit` on the loop the moment it is asked to stop (Ctrl-C,
    SIGTERM), before it waits for the requests in flight: the owner can answer them at once
    rather than let uvicorn wait out its graceful-shutdown time and cancel them."""

    def __init__(self, config: uvicorn.Config, on_exit: Callable[[], None]) -> None:
        super().__init__(config)
        self._loop = asyncio.get_running_loop()
        self._on_exit = on_exit

    def handle_exit(self, sig: int, frame: Any) -> None:
        super().handle_exit(sig, frame)
        # A signal handler: the loop runs the callback at its next turn.
        self._loop.call_soon_threadsafe(self._on_exit)


def _protocol_classes() -> tuple[type[Any], ...]:
    """uvicorn's HTTP protocol classes that connections of this process can be. h11's is
    counted only when uvicorn loaded it (it serves with h11 only when httptools is missing or
    this adapter is out of range): importing it for an `isinstance` would load h11, about
    0.5 MB, into every server."""
    h11_impl = sys.modules.get("uvicorn.protocols.http.h11_impl")
    if h11_impl is None:
        return (HttpToolsProtocol,)
    return (HttpToolsProtocol, h11_impl.H11Protocol)
