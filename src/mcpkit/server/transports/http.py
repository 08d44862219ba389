"""Streamable HTTP (2026-07-28) as a raw ASGI app: no framework routing on the hot path.

    app = server.http_app()            # mount at any path in Starlette/FastAPI (give the
                                       # host app `lifespan=app.lifespan`), or:
    server.run("http", port=8000)      # uvicorn (uvloop + httptools), 127.0.0.1 by default

One POST carries one JSON-RPC message. The answer is JSON, or an SSE stream once the handler
emits a notification (progress, log) before its result. Closing the stream cancels the handler
(TR-HTTP-23). `subscriptions/listen` is a long-lived SSE stream with keep-alive comments.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from ...protocol import jsonrpc
from ...protocol.errors import InternalError, InvalidRequest, MCPError
from ...protocol.jsonrpc import encode_error, encode_result
from ...telemetry.context import current_transport
from ..admission import (
    ClientNotification,
    ClientResponse,
    OpenSession,
    Refused,
    ServerRequest,
    admit,
)
from ..session_core import dispatch
from .asgi import (
    BodyRefused,
    Receive,
    Scope,
    Send,
    cancel_on_disconnect,
    error_headers,
    first_step,
    read_body,
    resume,
    route_path,
    send_error,
    send_json,
    send_refusal,
    too_large,
)
from .http_auth import authenticate, scope_challenge, send_metadata
from .http_exchange import Exchange, accepted
from .http_health import HEALTH_PATHS, answer_health
from .http_listen import ListenBudget, listen_stream
from .http_validation import HostPolicy

if TYPE_CHECKING:
    from ..auth.resource import BearerAuth
    from ..legacy.registry import SessionRegistry
    from ..server import Server
    from .legacy_http import LegacyHTTP

log = logging.getLogger("mcpkit.http")
DEFAULT_MAX_BODY = 4 * 1024 * 1024
DEFAULT_BODY_TIMEOUT = 60.0  # nginx's client_body_timeout


class StreamableHTTPApp:
    """The MCP endpoint as an ASGI 3 application."""

    def __init__(
        self,
        server: Server,
        *,
        path: str = "/mcp",
        allowed_hosts: list[str] | None = None,
        allowed_origins: list[str] | None = None,
        max_body_size: int = DEFAULT_MAX_BODY,
        body_timeout: float | None = DEFAULT_BODY_TIMEOUT,
        keepalive_interval: float = 15.0,
        max_listen_streams: int | None = None,
        auth: BearerAuth | None = None,
        health: bool = True,
        **session_options: Any,
    ) -> None:
        """`auth`: a `mcpkit.server.auth.BearerAuth`; every request then needs a valid token, and the
        Protected Resource Metadata is served from this app at `auth.metadata_paths`.
        `session_options` tune 2025-11-25 sessions (see `LegacyHTTP`): `max_sessions`,
        `idle_timeout` (seconds, None keeps idle sessions), `request_timeout`, `retry_ms`,
        `replay_events`, `session_id_prefix`, `clock`.
        `health`: answer `/healthz` and `/readyz` beside the endpoint (see `http_health`).
        `max_listen_streams`: listen streams open at once (both eras), 503 past it (`budget`)."""
        self.server = server
        self.health = health
        #: The server has telemetry: its spans learn the transport (`network.transport`).
        self.traced = server.telemetry is not None
        self.path = path.rstrip("/") or "/"
        self.auth = auth.served_at(self.path) if auth is not None else None
        self.policy = HostPolicy(allowed_hosts, allowed_origins)
        self.max_body_size = max_body_size
        #: Seconds each part of a request body may take to arrive (408 after; None: no limit).
        self.body_timeout = body_timeout
        self.keepalive_interval = keepalive_interval
        self.listeners = ListenBudget(max_listen_streams)
        #: Calls whose handler suspended, until answered (what a drain waits for), and the
        #: error they answer once `stop_calls` cancelled them.
        self.calls: set[asyncio.Task[Any]] = set()
        self.stopped: MCPError | None = None
        self.legacy: LegacyHTTP | None = None
        if server.legacy:
            from .legacy_http import LegacyHTTP

            session_options.setdefault("keepalive_interval", keepalive_interval)
            self.legacy = LegacyHTTP(server, **session_options)
            if server.telemetry is not None:
                server.telemetry.session_counts.append(self.legacy.sessions.__len__)
        elif session_options:
            raise TypeError(f"session options need a dual-era server: {sorted(session_options)}")

    def in_flight(self) -> int:
        """Calls being answered that have waited on something (both eras)."""
        return len(self.calls) + (self.legacy.in_flight() if self.legacy is not None else 0)

    def stop_calls(self, error: MCPError) -> list[asyncio.Task[Any]]:
        """The server stops now: cancel every call in flight, each answered with `error` (a
        JSON-RPC error, never an HTTP 500). The tasks cancelled."""
        self.stopped = error
        tasks = list(self.calls)
        for task in tasks:
            task.cancel()
        if self.legacy is not None:
            tasks += self.legacy.stop(error)  # cancelled there
        return tasks

    @property
    def sessions(self) -> SessionRegistry[Any] | None:
        """Live 2025-11-25 sessions (`len()`, `.stats()`); None on a modern-only server."""
        return self.legacy.sessions if self.legacy is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            if self.traced:
                current_transport.set("tcp")  # this request's task only (network.transport)
            if self.auth is None:
                await self._http(scope, receive, send)
                return
            from ..auth.access import current_access

            reset = current_access.set(None)  # the token is this request's only
            try:
                await self._http(scope, receive, send)
            finally:
                current_access.reset(reset)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    @asynccontextmanager
    async def lifespan(self, app: object = None) -> AsyncIterator[None]:
        """The server's lifespan, for the ASGI app this one is mounted in: Starlette and
        FastAPI do not pass lifespan events to mounted apps, so give them this one,

            mcp = server.http_app()
            app = Starlette(routes=[Mount("/weather", app=mcp)], lifespan=mcp.lifespan)

        or enter it in the app's own lifespan: `async with mcp.lifespan(app): yield`."""
        await self.server.startup()
        try:
            yield
        finally:
            await self._stop()

    async def _stop(self) -> None:
        if self.legacy is not None:
            self.legacy.close()
        await self.server.shutdown()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """ASGI lifespan events, when this app is served directly."""
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                try:
                    await self.server.startup()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                await self._stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Route → read → admit → answer, in that order and each once (`_post` reads, admits
        and answers)."""
        # -- route ------------------------------------------------------------------------------
        path = scope["path"]
        if path != self.path and path.rstrip("/") != self.path:
            path = route_path(scope)  # mounted: the path below `root_path`
            if path != self.path and path.rstrip("/") != self.path:
                await self._elsewhere(path, scope["method"], send)
                return
        exchange = Exchange(scope["headers"], receive, send)
        # DNS-rebinding defence first, before anything is parsed (TR-HTTP-02/03).
        origin = exchange.origin
        if not self.policy.raw_host_ok(exchange.host) or (
            origin is not None and not self.policy.origin_ok(origin)
        ):
            await send_json(
                send,
                403,
                encode_error(None, InvalidRequest("Forbidden: Host or Origin not allowed")),
            )
            return
        # TR-HDR-19: after Origin, before anything is parsed
        auth = self.auth
        if auth is not None and not await authenticate(auth, exchange.authorization, send):
            return
        method = scope["method"]
        if method == "POST":
            await self._post(exchange)
        else:
            await self._not_post(method, exchange)

    async def _not_post(self, method: str, exchange: Exchange) -> None:
        """GET (a 2025-11-25 session's standalone stream) and DELETE (its end); 405 else."""
        legacy, send, session_id = self.legacy, exchange.send, exchange.session_id
        if session_id is not None and legacy is not None and method in ("GET", "DELETE"):
            try:  # only the session's owner (POST, GET and DELETE alike)
                found = legacy.lookup(session_id, exchange.mirrored.protocol_version)
            except MCPError as exc:
                await send_error(send, exc)
                return
            if method == "GET":
                standalone = legacy.get(found, exchange.last_event_id, exchange.receive, send)
                await self.listeners.hold(standalone, send, None)
            else:
                await legacy.delete(found, send)
            return
        # TR-HBC-04: GET and DELETE exist only inside a 2025-11-25 session.
        await send_json(
            send,
            405,
            encode_error(None, InvalidRequest("Method not allowed: use POST")),
            [(b"allow", b"POST" if legacy is None else b"GET, POST, DELETE")],
        )

    async def _post(self, exchange: Exchange) -> None:
        """Read one JSON-RPC message, admit it (both eras), and act on it (`dispatch`)."""
        send, ctype = exchange.send, exchange.ctype
        if ctype != b"application/json" and (
            ctype is None or ctype.split(b";", 1)[0].strip().lower() != b"application/json"
        ):
            await send_error(
                send,
                InvalidRequest("Unsupported Media Type: Content-Type must be application/json"),
                status=415,
            )
            return
        if exchange.length > self.max_body_size:  # never read: its id cannot be known
            await send_refusal(send, too_large(self.max_body_size))
            return
        try:
            body = await read_body(exchange.receive, self.max_body_size, self.body_timeout)
        except BodyRefused as refused:
            if refused.error is not None:
                await send_refusal(send, refused.error)
            return  # the client left: nobody to answer
        session_id = exchange.session_id
        if session_id is not None and self.legacy is not None:
            # FIXTURE 2.1 rule 1: a session id means the 2025-11-25 wire (unknown id → 404).
            try:
                exchange.attach(self.legacy.lookup(session_id, exchange.mirrored.protocol_version))
            except MCPError as exc:
                await send_error(send, exc, jsonrpc.id_in(body))
                return
        session = exchange.session
        try:
            admitted = admit(
                self.server,
                body,
                exchange.mirrored,
                session.core if session is not None else None,
                exchange.emit,
                exchange.stream,
            )
        except Refused as refused:
            error = refused.error  # a refused notification: an HTTP error status (TR-HTTP-11)
            status = max(error.http_status, 400) if refused.notification else error.http_status
            await send_error(send, error, refused.request_id, status=status)
            return
        await dispatch(admitted, self, exchange)

    # -- what each admitted message does (`session_core.Handler`) --------------------------------
    # Each returns the awaitable that answers (`_post` awaits it): plain methods, not
    # coroutines of their own, so that no extra frame is awaited per request. `call`, the
    # modern requests' (above), is the coroutine that answers.
    def listen(self, request: ServerRequest, exchange: Exchange) -> Awaitable[None]:
        send = exchange.send
        stream = listen_stream(
            self.server, request, self.keepalive_interval, exchange.receive, send
        )
        return self.listeners.hold(stream, send, request.id)

    def session_request(self, request: ServerRequest, exchange: Exchange) -> Awaitable[None]:
        assert self.legacy is not None and exchange.session is not None
        assert exchange.stream is not None
        return self.legacy.answer(
            exchange.session, request, exchange.stream, exchange.receive, exchange.send
        )

    def open_session(self, request: OpenSession, exchange: Exchange) -> Awaitable[None]:
        assert self.legacy is not None  # only a dual-era server opens sessions
        return self.legacy.initialize(request, exchange.send)

    def notification(self, note: ClientNotification, exchange: Exchange) -> Awaitable[None]:
        if exchange.session is not None:
            exchange.session.core.receive_notification(note)
        return accepted(exchange.send)  # TR-HTTP-10/14: notifications are accepted leniently

    def response(self, response: ClientResponse, exchange: Exchange) -> Awaitable[None]:
        if exchange.session is not None:  # the client's answer to one of the session's requests
            exchange.session.core.receive_response(response.message)
        return accepted(exchange.send)

    def nothing(self, exchange: Exchange) -> Awaitable[None]:
        return accepted(exchange.send)

    async def _elsewhere(self, path: str, method: str, send: Send) -> None:
        """Not the MCP endpoint: the protected resource metadata, `/healthz` and `/readyz`
        (any Host: probes address the pod by IP), or 404."""
        if self.auth is not None and path in self.auth.metadata_paths:
            await send_metadata(self.auth, method, send)
            return
        if self.health and path in HEALTH_PATHS:
            await answer_health(self.server.readiness, path, method, send)
            return
        await send(
            {
                "type": "http.response.start",
                "status": 404,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", b"9")],
            }
        )
        await send({"type": "http.response.body", "body": b"Not Found"})

    async def call(self, request: ServerRequest, exchange: Exchange) -> None:
        """Answer a request (`dispatch`'s most common case: the hot path)."""
        watcher: asyncio.Task[None] | None = None
        task: asyncio.Task[Any] | None = None
        extra: list[tuple[bytes, bytes]] | None = None
        try:
            # Most handlers answer without suspending: then no disconnect can matter, and no
            # watcher task is needed. Once the handler suspends, a disconnect cancels it
            # (TR-HTTP-23); it goes on in this same task (contextvars, current_task unchanged).
            handler = self.server.handle(request)
            done, result = first_step(handler)
            if not done:
                task = asyncio.current_task()
                assert task is not None
                watcher = asyncio.get_running_loop().create_task(
                    cancel_on_disconnect(exchange.receive, task)
                )
                self.calls.add(task)
                result = await resume(handler, result)
            body = encode_result(request.id, result)
            status = 200
        except MCPError as exc:
            body, status = encode_error(request.id, exc), exc.http_status
            if status == 403 and self.auth is not None:
                extra = [(b"www-authenticate", scope_challenge(self.auth, exc))]
            elif status == 503:
                extra = error_headers(exc)
        except asyncio.CancelledError:
            if watcher is not None and watcher.done() and not watcher.cancelled():
                assert task is not None
                task.uncancel()
                return  # TR-HTTP-24: the client went away; send nothing more.
            if self.stopped is None:
                raise
            assert task is not None
            task.uncancel()  # stopped by `stop_calls`: the client learns why
            body, status = encode_error(request.id, self.stopped), 200
        except Exception:
            log.exception("internal error answering %s", request.method)
            body, status = encode_error(request.id, InternalError()), 200
        finally:
            if task is not None:
                self.calls.discard(task)
            if watcher is not None and not watcher.done():
                watcher.cancel()
        await exchange.finish(body, 200 if exchange.streaming else status, extra)
