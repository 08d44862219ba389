"""2025-11-25 Streamable HTTP sessions, served by `StreamableHTTPApp` beside the stateless wire.

Routing (FIXTURE 2.1, CHECKLIST B.1.1-3) happens in the server's front door
(`mcpkit.server.admission`), called by `http.py`; this module gets what belongs to the session
era: an admitted `initialize`, and anything carrying an `Mcp-Session-Id` (looked up here, for
its owner only). Per session: POST (requests, notifications, the client's answers), GET (the
standalone SSE stream, or resumption with `Last-Event-ID`) and DELETE (end it).

Sessions live in this process only. Behind several instances, route by `Mcp-Session-Id`
(sticky sessions): a live SSE stream and a handler awaiting the client's answer cannot move to
another process. An instance that does not know a session id answers 404 at once, and the client
starts a new session with `initialize` (transports > Session Management, rule 4).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...protocol.errors import (
    InvalidRequest,
    MCPError,
    ServerBusy,
    TooManyInFlight,
)
from ...protocol.jsonrpc import encode_error, encode_result
from ...protocol.versions import LEGACY_VERSIONS
from ..admission import OpenSession, ServerRequest
from ..legacy.registry import DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_SESSIONS, SessionRegistry
from ..legacy.replay import Replay, ReplayStream
from ..legacy.session import LegacySession
from ..ownership import Owner
from .asgi import Receive, Send, cancel_on_disconnect, error_headers, send_json
from .http_exchange import accepted
from .legacy_streams import open_sse, pump, started

if TYPE_CHECKING:
    from ..server import Server


#: Requests in flight per session.
MAX_IN_FLIGHT = 128


class HttpSession:
    """A `LegacySession` plus what HTTP adds: its resumable streams (`Replay`, the core's) and
    the connections attached to them."""

    def __init__(self, core: LegacySession, keep: int) -> None:
        self.core = core
        self.id = core.id
        self.last_active = 0.0
        self.connections = 0
        self.replay = Replay(keep)

    @property
    def owner(self) -> Owner:
        return self.core.owner

    def busy(self) -> bool:
        return self.connections > 0

    def close(self) -> None:
        self.core.close()
        self.replay.close()

    def open_standalone(self) -> ReplayStream:
        """The GET stream, which carries the session's own messages (list changes, updates)."""
        stream = self.replay.open_standalone()
        self.core.notify_outbox = stream
        return stream


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
        #: Set by `drain()`: no new session opens here.
        self.draining = False

    # -- without a session ---------------------------------------------------------------------
    async def initialize(self, admitted: OpenSession, send: Send) -> None:
        """An admitted `initialize` opens a session; nothing is kept when it is rejected (SDK
        issue #3228)."""
        try:
            if self.draining:
                raise ServerBusy(
                    "This server instance is shutting down; initialize again (another "
                    "instance will open the session)",
                    retry_after=1,
                )
            self.sessions.reserve()
            core = LegacySession(
                self.server,
                self.sessions.new_id(),
                request_timeout=self.request_timeout,
                max_in_flight=MAX_IN_FLIGHT,
            )
            result = core.initialize(admitted.params)
        except MCPError as exc:
            await _error(send, exc, admitted.id)
            return
        self.sessions.add(HttpSession(core, self.replay_events))
        if not self._listening:
            self._listening = True
            self.server.subscriptions.add_listener(self._fanout)
        await send_json(
            send, 200, encode_result(admitted.id, result), [(b"mcp-session-id", core.id.encode())]
        )

    def _fanout(self, method: str, params: dict[str, Any] | None, uri: str | None) -> None:
        for session in self.sessions:
            session.core.deliver(method, params, uri)

    # -- within a session -----------------------------------------------------------------------
    def lookup(self, session_id: str, version: str | None) -> HttpSession:
        """The caller's live session (POST, GET and DELETE alike); another caller's session
        is as unknown as a missing one (404, no hint that it exists)."""
        session = self.sessions.lookup(session_id)
        if version is not None and version not in LEGACY_VERSIONS:
            # 2025-11-25 transports > Protocol Version Header: unsupported → 400.
            raise InvalidRequest(
                f"Bad Request: MCP-Protocol-Version {version!r} is not a session-era version "
                f"({', '.join(LEGACY_VERSIONS)})"
            )
        self.sessions.touch(session)
        return session

    async def answer(
        self,
        session: HttpSession,
        request: ServerRequest,
        stream: ReplayStream,
        receive: Receive,
        send: Send,
    ) -> None:
        """An admitted request on `stream` (its outbox): plain JSON when it answers at once,
        else an SSE stream the client may resume."""
        try:
            session.core.start(request)
        except TooManyInFlight as exc:
            await _error(send, exc, request.id)
            return
        # The request's task was scheduled before this one resumes: a handler that answers
        # without suspending has answered by then. Plain JSON, and no stream or watcher.
        await asyncio.sleep(0)
        body = stream.only_response
        if body is not None:
            self.sessions.touch(session)
            await send_json(send, 200, body)
            return
        # Kept from now on, for a GET to resume (nothing of it was sent before: no client
        # can have asked for it yet).
        session.replay.hold(stream)
        await self._attach(session, stream, 0, receive, send, first=True)

    async def get(
        self, session: HttpSession, last_event_id: str | None, receive: Receive, send: Send
    ) -> None:
        if last_event_id is not None:
            found = session.replay.find(last_event_id)
            if found is None:
                await _error(send, InvalidRequest("Bad Request: unknown or expired Last-Event-ID"))
                return
            stream, after = found
        else:
            stream = session.open_standalone()
            after = stream.seq
        await self._attach(session, stream, after, receive, send, first=False)

    async def delete(self, session: HttpSession, send: Send) -> None:
        self.sessions.remove(session.id)
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]}
        )
        await send({"type": "http.response.body", "body": b""})

    async def _attach(
        self,
        session: HttpSession,
        stream: ReplayStream,
        after: int,
        receive: Receive,
        send: Send,
        *,
        first: bool,
    ) -> None:
        """Carry `stream` on this connection until it ends, is released or is taken over."""
        owner = object()
        stream.take(owner)
        session.connections += 1
        task = asyncio.current_task()
        assert task is not None
        watcher = asyncio.get_running_loop().create_task(cancel_on_disconnect(receive, task))
        try:
            if first:
                await started(stream)
                body = stream.only_response
                if body is not None:  # nothing before the response: plain JSON
                    session.replay.forget(stream)
                    await send_json(send, 200, body)
                    return
                if stream.cancelled_silently:  # cancelled before anything was sent
                    session.replay.forget(stream)
                    await accepted(send)
                    return
            await open_sse(stream, send, after, self.retry_ms)
            last = await pump(stream, send, after, owner, self.keepalive_interval)
            if stream.delivered(last):
                session.replay.forget(stream)  # nothing left to resume
        except asyncio.CancelledError:
            if watcher.done() and not watcher.cancelled():
                task.uncancel()  # the client went away; the request goes on (not a cancel)
                return
            raise
        finally:
            stream.let_go(owner)
            session.connections -= 1
            self.sessions.touch(session)
            if not watcher.done():
                watcher.cancel()

    def drain(self) -> None:
        """The instance is on its way out: no new session, and each session's GET stream ends
        (its client reconnects, finds the session gone and initializes elsewhere); requests in
        flight go on."""
        self.draining = True
        for session in self.sessions:
            session.replay.end_standalone()

    def in_flight(self) -> int:
        """Requests being answered, over all sessions."""
        return sum(len(session.core.tasks) for session in self.sessions)

    def stop(self, error: MCPError) -> list[asyncio.Task[None]]:
        """The instance stops now: every request in flight is cancelled and answered `error`
        (the tasks cancelled)."""
        return [task for session in self.sessions for task in session.core.stop(error)]

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
