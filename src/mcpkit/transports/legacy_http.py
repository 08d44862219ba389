"""2025-11-25 Streamable HTTP sessions, served by `StreamableHTTPApp` beside the stateless wire.

Routing (FIXTURE 2.1, CHECKLIST B.1.1-3) happens in `http.py`; this module gets the requests
that belong to the session era: `initialize` without a session, and anything carrying an
`Mcp-Session-Id`. Per session: POST (requests, notifications, the client's answers), GET (the
standalone SSE stream, or resumption with `Last-Event-ID`) and DELETE (end it).

Sessions live in this process only. Behind several instances, route by `Mcp-Session-Id`
(sticky sessions): a live SSE stream and a handler awaiting the client's answer cannot move to
another process. An instance that does not know a session id answers 404 at once, and the client
starts a new session with `initialize` (transports > Session Management, rule 4).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol.errors import InvalidRequest, MCPError, SessionNotFound, TooManyInFlight
from ..protocol.jsonrpc import Message, Notification, Request, Response, encode_error, encode_result
from ..protocol.versions import LEGACY_VERSIONS
from ..server.legacy.registry import DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_SESSIONS, SessionRegistry
from ..server.legacy.session import LegacySession
from ..server.ownership import current_owner, owned
from .asgi import Receive, Send, cancel_on_disconnect, error_headers, send_json
from .legacy_streams import EventStream, parse_event_id

if TYPE_CHECKING:
    from ..server.server import Server


#: Finished streams kept per session for late resumption; requests in flight per session.
MAX_STREAMS = 64
MAX_IN_FLIGHT = 128


class HttpSession:
    """A `LegacySession` plus what HTTP adds: its SSE streams and attached connections."""

    def __init__(self, core: LegacySession, keep: int) -> None:
        self.core = core
        self.id = core.id
        self.last_active = 0.0
        self.connections = 0
        self.keep = keep
        self.streams: dict[int, EventStream] = {}
        self.standalone: EventStream | None = None
        self._next = 0
        #: Who opened the session: only the same caller may use it (`ownership`).
        self.owner = current_owner()

    def busy(self) -> bool:
        return self.connections > 0

    def close(self) -> None:
        self.core.close()
        for stream in self.streams.values():
            stream.close()
        self.streams.clear()
        if self.standalone is not None:
            self.standalone.close()
            self.standalone = None

    def new_stream(self) -> EventStream:
        self._next += 1
        stream = EventStream(self._next, self.keep)
        self.streams[stream.number] = stream
        if len(self.streams) > MAX_STREAMS:
            for number in [n for n, s in self.streams.items() if s.done][: -MAX_STREAMS // 2]:
                del self.streams[number]
        return stream

    def open_standalone(self) -> EventStream:
        if self.standalone is None:
            self.standalone = EventStream(0, self.keep)
            self.core.notify_outbox = self.standalone
        return self.standalone

    def find(self, last_event_id: str) -> tuple[EventStream, int] | None:
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            return None
        number, seq = parsed
        stream = self.standalone if number == 0 else self.streams.get(number)
        return None if stream is None else (stream, seq)


class LegacyHTTP:
    """The session-era side of one HTTP endpoint. `sessions` is observable (len, stats())."""

    def __init__(
        self,
        server: Server,
        *,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
        request_timeout: float | None = 600.0,
        retry_ms: int = 1000,
        keepalive_interval: float | None = 15.0,
        replay_events: int = 256,
        session_id_prefix: str = "",
    ) -> None:
        self.server = server
        self.sessions: SessionRegistry[HttpSession] = SessionRegistry(
            max_sessions=max_sessions,
            idle_timeout=idle_timeout,
            clock=clock,
            id_prefix=session_id_prefix,
        )
        self.request_timeout = request_timeout
        self.retry_ms = retry_ms
        self.keepalive_interval = keepalive_interval
        self.replay_events = replay_events
        self._listening = False

    # -- without a session ----------------------------------------------------------------------
    async def initialize(self, msg: Request, send: Send) -> None:
        """`initialize` opens a session; nothing is kept when it is rejected (SDK issue #3228)."""
        if msg.method != "initialize":
            await _error(
                send,
                InvalidRequest(
                    "Bad Request: no Mcp-Session-Id; open a session with initialize first"
                ),
                msg.id,
                400,
            )
            return
        try:
            self.sessions.reserve()
            core = LegacySession(
                self.server, self.sessions.new_id(), request_timeout=self.request_timeout
            )
            result = core.initialize(msg.params)
        except MCPError as exc:
            await _error(send, exc, msg.id, exc.http_status if exc.http_status != 200 else 400)
            return
        self.sessions.add(HttpSession(core, self.replay_events))
        if not self._listening:
            self._listening = True
            self.server.subscriptions.add_listener(self._fanout)
        await send_json(
            send, 200, encode_result(msg.id, result), [(b"mcp-session-id", core.id.encode())]
        )

    def _fanout(self, method: str, params: dict[str, Any] | None, uri: str | None) -> None:
        for session in self.sessions:
            session.core.deliver(method, params, uri)

    # -- within a session -----------------------------------------------------------------------
    def _lookup(self, session_id: str, version: str | None) -> HttpSession:
        session = self.sessions.get(session_id)
        if session is None or not owned(session.owner):
            # Another caller's session id is as good as unknown: no hint that it exists.
            raise SessionNotFound()
        if version is not None and version not in LEGACY_VERSIONS:
            # 2025-11-25 transports > Protocol Version Header: unsupported → 400.
            raise InvalidRequest(
                f"Bad Request: MCP-Protocol-Version {version!r} is not a session-era version "
                f"({', '.join(LEGACY_VERSIONS)})"
            )
        self.sessions.touch(session)
        return session

    async def post(
        self, session_id: str, msg: Message, version: str | None, receive: Receive, send: Send
    ) -> None:
        rid = msg.id if type(msg) is Request else None
        try:
            session = self._lookup(session_id, version)
        except MCPError as exc:
            await _error(send, exc, rid, exc.http_status)
            return
        if type(msg) is Notification:
            session.core.receive_notification(msg)
            await _accepted(send)
            return
        if type(msg) is Response:
            session.core.receive_response(msg)
            await _accepted(send)
            return
        assert type(msg) is Request
        if len(session.core.tasks) >= MAX_IN_FLIGHT:
            await _error(send, TooManyInFlight(), rid)
            return
        stream = session.new_stream()
        session.core.start(msg, stream)
        # The request's task was scheduled before this one resumes: a handler that answers
        # without suspending has answered by then. Plain JSON, and no stream or watcher.
        await asyncio.sleep(0)
        body = stream.only_response
        if body is not None:
            session.streams.pop(stream.number, None)
            self.sessions.touch(session)
            await send_json(send, 200, body)
            return
        await self._attach(session, stream, 0, receive, send, first=True)

    async def get(
        self,
        session_id: str,
        last_event_id: str | None,
        version: str | None,
        receive: Receive,
        send: Send,
    ) -> None:
        try:
            session = self._lookup(session_id, version)
        except MCPError as exc:
            await _error(send, exc, None, exc.http_status)
            return
        if last_event_id is not None:
            found = session.find(last_event_id)
            if found is None:
                await _error(send, InvalidRequest("Bad Request: unknown or expired Last-Event-ID"))
                return
            stream, after = found
        else:
            stream = session.open_standalone()
            after = stream.seq
        await self._attach(session, stream, after, receive, send, first=False)

    async def delete(self, session_id: str, version: str | None, send: Send) -> None:
        try:
            session = self._lookup(session_id, version)  # the owner only, like POST and GET
        except MCPError as exc:
            await _error(send, exc, None, exc.http_status)
            return
        self.sessions.remove(session.id)
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]}
        )
        await send({"type": "http.response.body", "body": b""})

    async def _attach(
        self,
        session: HttpSession,
        stream: EventStream,
        after: int,
        receive: Receive,
        send: Send,
        *,
        first: bool,
    ) -> None:
        """Carry `stream` on this connection until it ends, is released or is taken over."""
        owner = object()
        stream.owner = owner
        session.connections += 1
        task = asyncio.current_task()
        assert task is not None
        watcher = asyncio.get_running_loop().create_task(cancel_on_disconnect(receive, task))
        try:
            if first:
                await stream.started()
                body = stream.only_response
                if body is not None:  # nothing before the response: plain JSON
                    session.streams.pop(stream.number, None)
                    await send_json(send, 200, body)
                    return
                if stream.done and stream.seq == 0:  # cancelled before anything was sent
                    session.streams.pop(stream.number, None)
                    await _accepted(send)
                    return
            await stream.open(send, after, self.retry_ms)
            last = await stream.pump(send, after, owner, self.keepalive_interval)
            if stream.done and last == stream.seq and stream.number:
                session.streams.pop(stream.number, None)  # delivered: nothing left to resume
        except asyncio.CancelledError:
            if watcher.done() and not watcher.cancelled():
                task.uncancel()  # the client went away; the request goes on (not a cancel)
                return
            raise
        finally:
            if stream.owner is owner:
                stream.owner = None
            session.connections -= 1
            self.sessions.touch(session)
            if not watcher.done():
                watcher.cancel()

    def close(self) -> None:
        self.sessions.close_all()
        if self._listening:
            self._listening = False
            self.server.subscriptions.remove_listener(self._fanout)


async def _error(send: Send, exc: MCPError, rid: Any = None, status: int | None = None) -> None:
    await send_json(
        send,
        status or (exc.http_status if exc.http_status >= 400 else 400),
        encode_error(rid, exc),
        error_headers(exc),
    )


async def _accepted(send: Send) -> None:
    await send(
        {"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]}
    )
    with contextlib.suppress(Exception):
        await send({"type": "http.response.body", "body": b""})
