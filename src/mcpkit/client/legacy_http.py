"""Streamable HTTP as of 2025-11-25, client side: session id, GET stream, resumption, DELETE."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

import aiohttp

from ..protocol.errors import MCPError
from ..protocol.jsonrpc import (
    JSONObject,
    Notification,
    Request,
    RequestId,
    Response,
    decode,
    encode_notification,
    encode_request,
)
from .errors import ConnectionClosed, InvalidResponse, TransportError
from .http_failures import failure, raise_http_error, unexpected_content
from .http_headers import CALL_HEADERS
from .sse import SSEParser
from .transport import answer_request

log = logging.getLogger("mcpkit.client")

RequestHandler = Callable[[str, JSONObject], Awaitable[JSONObject]]
NotificationSink = Callable[[Notification], Awaitable[None]]
ACCEPT = "application/json, text/event-stream"
MAX_RESUMES = 5


class SessionExpired(TransportError):
    """HTTP 404 on a request carrying our session id: the server forgot the session."""


class Endpoint(Protocol):
    """What the channel uses of its `HttpTransport`: the endpoint and its HTTP exchange."""

    @property
    def url(self) -> str: ...

    @property
    def extra_headers(self) -> Mapping[str, str]: ...

    @property
    def http(self) -> aiohttp.ClientSession | None: ...

    async def send(
        self, method: str, headers: Mapping[str, str], data: bytes | None = None
    ) -> aiohttp.ClientResponse: ...


class LegacyHttpChannel:
    """One 2025-11-25 session over an `HttpTransport` (a `SessionChannel`)."""

    def __init__(
        self,
        transport: Endpoint,
        on_request: RequestHandler,
        on_notification: NotificationSink,
    ) -> None:
        self.transport = transport
        self.on_request = on_request
        self.on_notification = on_notification
        self.session_id: str | None = None
        self.version: str | None = None
        self._waiting: dict[RequestId, asyncio.Future[Response]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stream_task: asyncio.Task[None] | None = None
        self._closing = False

    def headers(self, stream_only: bool = False) -> dict[str, str]:
        h = {"Accept": "text/event-stream" if stream_only else ACCEPT}
        if not stream_only:
            h["Content-Type"] = "application/json"
        if self.version is not None:
            h["MCP-Protocol-Version"] = self.version
        if self.session_id is not None:
            h["Mcp-Session-Id"] = self.session_id
        h.update(self.transport.extra_headers)
        call_headers = CALL_HEADERS.get()
        if call_headers:
            h.update(call_headers)
        return h

    def session_ready(self, version: str) -> None:
        self.version = version

    def detach(self) -> None:
        """Nothing to give back: the channel never changed the transport."""

    # -- requests --------------------------------------------------------------------------
    async def request(self, request_id: RequestId, method: str, params: JSONObject) -> Response:
        waiter: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = waiter
        url = self.transport.url
        answered = False
        try:
            async with await self.transport.send(
                "POST", self.headers(), encode_request(request_id, method, params)
            ) as resp:
                answered = True
                if resp.status == 404 and self.session_id is not None:
                    raise SessionExpired(
                        "the server no longer knows this session (HTTP 404)", status=404
                    )
                if resp.status >= 300:
                    await raise_http_error(resp)
                if method == "initialize":
                    self.session_id = resp.headers.get("Mcp-Session-Id") or self.session_id
                if resp.content_type == "application/json":
                    message = decode(await resp.read())
                    if not isinstance(message, Response):
                        raise InvalidResponse("the JSON body is not a JSON-RPC response")
                    return message
                if resp.content_type != "text/event-stream":
                    raise unexpected_content(url, resp.status, resp.content_type)
                parser = await self._consume(resp)
            if waiter.done():
                return waiter.result()
            return await self._resume(parser, waiter)
        except (aiohttp.ClientError, OSError) as exc:
            raise failure(url, exc, answered=answered) from exc
        finally:
            self._waiting.pop(request_id, None)

    async def _resume(self, parser: SSEParser, waiter: asyncio.Future[Response]) -> Response:
        """The stream closed before our response: wait `retry`, GET with Last-Event-ID."""
        for _ in range(MAX_RESUMES):
            event_id = parser.last_event_id
            if event_id is None:
                raise ConnectionClosed(
                    "the SSE stream closed before the response and cannot be resumed"
                )
            await asyncio.sleep((parser.retry_ms or 1000) / 1000.0)
            headers = {**self.headers(stream_only=True), "Last-Event-ID": event_id}
            async with await self.transport.send("GET", headers) as resp:
                if resp.status >= 300:
                    await raise_http_error(resp)
                retry_ms = parser.retry_ms
                parser = await self._consume(resp, until=waiter)
                parser.retry_ms = parser.retry_ms or retry_ms
            if waiter.done():
                return waiter.result()
        raise ConnectionClosed("gave up resuming the SSE stream")

    async def _consume(
        self, resp: aiohttp.ClientResponse, until: asyncio.Future[Response] | None = None
    ) -> SSEParser:
        parser = SSEParser()
        async for chunk in resp.content.iter_any():
            for event in parser.feed(chunk):
                if event.data:
                    await self._dispatch(event.data)
            if until is not None and until.done():
                break
        for event in parser.finish():
            if event.data:
                await self._dispatch(event.data)
        return parser

    async def _dispatch(self, data: str) -> None:
        try:
            message = decode(data)
        except MCPError:
            log.warning("ignoring an invalid message on the SSE stream")
            return
        if isinstance(message, Response):
            waiter = self._waiting.get(message.id) if message.id is not None else None
            if waiter is not None and not waiter.done():
                waiter.set_result(message)
            else:  # an answer to a request given up on (timed out, cancelled): CANC-12
                log.debug("discarding a late response to abandoned request %r", message.id)
        elif isinstance(message, Notification):
            await self.on_notification(message)
        elif isinstance(message, Request):
            task = asyncio.create_task(self._answer(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _answer(self, request: Request) -> None:
        body = await answer_request(self.on_request, request)
        with contextlib.suppress(aiohttp.ClientError, OSError):
            async with await self.transport.send("POST", self.headers(), body) as resp:
                await resp.read()

    async def notify(self, method: str, params: JSONObject | None) -> None:
        try:
            async with await self.transport.send(
                "POST", self.headers(), encode_notification(method, params)
            ) as resp:
                if resp.status >= 300:
                    await raise_http_error(resp)
        except (aiohttp.ClientError, OSError) as exc:
            raise failure(self.transport.url, exc, answered=False) from exc

    # -- the standalone GET stream -------------------------------------------------------------
    async def open_stream(self, timeout: float = 10.0) -> None:
        """Open the standalone GET stream and wait until the server has answered it, so that
        requests the server sends there after our next call are not lost."""
        ready = asyncio.get_running_loop().create_future()
        self._stream_task = asyncio.create_task(self._stream(ready))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(ready), timeout)

    async def _stream(self, ready: asyncio.Future[None]) -> None:
        last_id: str | None = None
        retry_ms = 1000
        try:
            for _ in range(MAX_RESUMES + 1):
                headers = self.headers(stream_only=True)
                if last_id is not None:
                    headers["Last-Event-ID"] = last_id
                try:
                    async with await self.transport.send("GET", headers) as resp:
                        if not ready.done():
                            ready.set_result(None)
                        if resp.status != 200 or resp.content_type != "text/event-stream":
                            return  # 405: the server offers no stream
                        parser = await self._consume(resp)
                        last_id = parser.last_event_id or last_id
                        retry_ms = parser.retry_ms or retry_ms
                except (aiohttp.ClientError, OSError):
                    pass
                if self._closing:
                    return
                await asyncio.sleep(retry_ms / 1000.0)
        finally:
            if not ready.done():
                ready.set_result(None)

    async def end_session(self) -> None:
        """Close the GET stream and DELETE the session."""
        self._closing = True
        if self._stream_task is not None:
            self._stream_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._stream_task
        for task in list(self._tasks):
            task.cancel()
        if self.session_id is not None and self.transport.http is not None:
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with await self.transport.send("DELETE", self.headers()) as resp:
                    await resp.read()
