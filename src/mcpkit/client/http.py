"""Streamable HTTP client transport (2026-07-28) on aiohttp.

One POST per request (TR-HTTP-06) over one keep-alive `aiohttp.ClientSession`. The answer
is either one JSON object or an SSE stream of notifications ending with the response
(TR-HTTP-13). Cancelling `request()` closes the connection, which is the cancel signal on
HTTP (CANC-04).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import TYPE_CHECKING

import aiohttp
import orjson

from ..protocol.errors import MCPError
from ..protocol.jsonrpc import (
    JSONObject,
    Notification,
    RequestId,
    Response,
    decode,
    encode_request,
)
from ..protocol.transport import NotificationSink, ServerRequestHandler, TransportCapabilities, also
from .errors import InvalidResponse, StreamBroken, TransportError
from .http_failures import failure, raise_http_error, unexpected_content
from .http_headers import CALL_HEADERS, ToolHeaderIndex, build_request_headers
from .proxy import proxy_for
from .sse import SSEParser
from .transport import NotificationHandler, dispatch_notification, logger

if TYPE_CHECKING:
    from .auth.exchange import Exchange
    from .auth.oauth import OAuth
    from .h1 import H1Pool, H1Response
    from .legacy_http import LegacyHttpChannel

__all__ = ["HttpTransport"]

#: Seconds an idle connection stays in the pool: under the usual server idle timeouts (Node and
#: uvicorn close after 5 s), so a connection the server is closing is not picked for a request,
#: which could not be sent again safely once it has gone out.
KEEPALIVE = 4.0


class HttpTransport:
    """Talks to one MCP endpoint URL. `headers` are added to every request; `auth` (an
    `mcpkit.client.auth.OAuth`) wraps every HTTP exchange: it answers 401/403 challenges and
    adds the access token (AUTH-20)."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        on_notification: NotificationHandler | None = None,
        connect_timeout: float | None = 10.0,
        max_connections: int = 16,
        auth: OAuth | None = None,
    ) -> None:
        self.url = url
        self.extra_headers = dict(headers or {})
        self.auth = auth
        #: Every HTTP exchange goes through this: aiohttp, wrapped by `auth` when given.
        self.exchange: Exchange = self._exchange
        if auth is not None:
            from .auth.exchange import AuthorizedExchange

            auth.bind(url)
            self.exchange = AuthorizedExchange(self._exchange, auth, url)
        self.on_notification = on_notification
        self.tool_headers = ToolHeaderIndex()
        self._connect_timeout = connect_timeout
        self._max_connections = max_connections
        self._http: aiohttp.ClientSession | None = None
        #: The request hot path without auth: a lean HTTP/1.1 pool (`h1.py`) beside aiohttp.
        self._h1: H1Pool | None = None
        #: The proxy that HTTP(S)_PROXY / ALL_PROXY name for this URL, unless NO_PROXY skips it.
        self.proxy: str | None = None
        self.capabilities = TransportCapabilities(
            kind="http",
            era_key=url,
            url=url,
            notifications=self.add_notification_handler,
            stream=self.stream,
            reopens_streams=True,  # a broken listen stream is opened again with a new POST
            credentials_key=auth.cache_key if auth is not None else None,
            accept_tools=self.accept_tools,
            open_session=self.open_session,
        )

    @property
    def http(self) -> aiohttp.ClientSession | None:
        """The aiohttp session while started (None before `start` and after `close`)."""
        return self._http

    async def start(self) -> None:
        if self._http is not None:
            return
        connector = aiohttp.TCPConnector(limit=self._max_connections, keepalive_timeout=KEEPALIVE)
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self._connect_timeout)
        self._http = aiohttp.ClientSession(
            connector=connector, timeout=timeout, auto_decompress=True
        )
        self.proxy = proxy_for(self.url)
        # The lean pool speaks to the origin only: with a proxy, aiohttp carries everything.
        if (
            self.auth is None
            and self.proxy is None
            and self.url.startswith(("http://", "https://"))
        ):
            try:
                from .h1 import H1Pool
            except ImportError:  # no httptools: everything goes through aiohttp
                return
            self._h1 = H1Pool(
                self.url,
                connect_timeout=self._connect_timeout,
                limit=self._max_connections,
                keepalive=KEEPALIVE,
            )

    async def close(self) -> None:
        http, self._http = self._http, None
        h1, self._h1 = self._h1, None
        if h1 is not None:
            h1.close()
        if http is not None:
            await http.close()
        if self.auth is not None:
            await self.auth.close()

    async def send(
        self, method: str, headers: Mapping[str, str], data: bytes | None = None
    ) -> aiohttp.ClientResponse:
        """One HTTP exchange with the endpoint, through `exchange` (with `auth`, a challenge is
        answered and the request sent again); the caller releases the response
        (`async with await transport.send(...) as resp`)."""
        return await self.exchange(method, headers, data)

    async def _exchange(
        self, method: str, headers: Mapping[str, str], data: bytes | None = None
    ) -> aiohttp.ClientResponse:
        if self._http is None:
            raise TransportError("HTTP transport is not started")
        return await self._http.request(
            method, self.url, data=data, headers=headers, proxy=self.proxy
        )

    def open_session(
        self, on_request: ServerRequestHandler, on_notification: NotificationSink
    ) -> LegacyHttpChannel:
        """A 2025-11-25 session on this endpoint: `Mcp-Session-Id`, the GET stream, DELETE."""
        from .legacy_http import LegacyHttpChannel

        return LegacyHttpChannel(self, on_request, on_notification)

    def accept_tools(self, tools: list[JSONObject]) -> list[JSONObject]:
        return self.tool_headers.accept(tools)

    def add_notification_handler(self, handler: NotificationHandler) -> None:
        """Server notifications go to `handler` too (`capabilities.notifications`)."""
        self.on_notification = also(self.on_notification, handler)

    def headers_for(self, method: str, params: JSONObject) -> dict[str, str]:
        """All headers of the POST for this request."""
        header_params = (
            self.tool_headers.params_for(params.get("name")) if method == "tools/call" else ()
        )
        headers = build_request_headers(method, params, header_params)
        headers.update(self.extra_headers)
        call_headers = CALL_HEADERS.get()
        if call_headers:  # rare: Client.call_tool(headers=...)
            headers.update(call_headers)
        return headers

    async def request(self, request_id: RequestId, method: str, params: JSONObject) -> Response:
        if self._http is None:
            raise TransportError("HTTP transport is not started")
        body = encode_request(request_id, method, params)
        headers = self.headers_for(method, params)
        try:
            resp = await self._post(headers, body)
        except (aiohttp.ClientError, OSError) as exc:
            raise failure(self.url, exc, answered=False) from exc
        async with resp:
            try:
                return await self._read_response(resp, request_id)
            except MCPError:
                raise  # an error body, fully read: the connection stays reusable
            except (aiohttp.ClientError, OSError) as exc:
                resp.close()
                raise failure(self.url, exc, answered=True) from exc
            except BaseException:
                resp.close()  # drop the connection: on HTTP this cancels the request
                raise

    async def _post(
        self, headers: Mapping[str, str], body: bytes
    ) -> aiohttp.ClientResponse | H1Response:
        if self._h1 is None:
            return await self.send("POST", headers, body)
        resp = await self._h1.post(headers, body)
        if 300 <= resp.status < 400:  # a redirect: aiohttp follows it
            resp.close()
            return await self.send("POST", headers, body)
        return resp

    async def stream(
        self, request_id: RequestId, method: str, params: JSONObject
    ) -> AsyncGenerator[JSONObject, None]:
        """A long-lived request (subscriptions/listen): every message on its stream, in order.
        Leaving the iteration closes the stream, which ends the subscription (SUB-10)."""
        if self._http is None:
            raise TransportError("HTTP transport is not started")
        body = encode_request(request_id, method, params)
        answered = False
        try:
            async with await self.send("POST", self.headers_for(method, params), body) as resp:
                answered = True
                if resp.status >= 300:
                    await raise_http_error(resp)
                if resp.content_type == "application/json":
                    yield orjson.loads(await resp.read())
                    return
                if resp.content_type != "text/event-stream":
                    raise unexpected_content(self.url, resp.status, resp.content_type)
                parser = SSEParser()
                try:
                    async for chunk in resp.content.iter_any():
                        for event in parser.feed(chunk):
                            if event.event == "message" and event.data:
                                yield orjson.loads(event.data)
                finally:
                    resp.close()
        except (aiohttp.ClientError, OSError) as exc:
            raise failure(self.url, exc, answered=answered) from exc

    async def _read_response(
        self, resp: aiohttp.ClientResponse | H1Response, request_id: RequestId
    ) -> Response:
        if resp.status >= 300:
            await raise_http_error(resp)
        ctype = resp.content_type
        if ctype == "application/json":
            return _expect_response(await resp.read(), resp.status)
        if ctype == "text/event-stream":
            return await self._read_stream(resp, request_id)
        raise unexpected_content(self.url, resp.status, ctype)

    async def _read_stream(
        self, resp: aiohttp.ClientResponse | H1Response, request_id: RequestId
    ) -> Response:
        parser = SSEParser()
        async for chunk in resp.content.iter_any():
            for event in parser.feed(chunk):
                final = await self._on_event(event.event, event.data, request_id)
                if final is not None:
                    return final
        for event in parser.finish():
            final = await self._on_event(event.event, event.data, request_id)
            if final is not None:
                return final
        raise StreamBroken(f"the SSE stream from {self.url} ended before the response arrived")

    async def _on_event(self, kind: str, data: str, request_id: RequestId) -> Response | None:
        if kind != "message" or not data:
            return None
        try:
            message = decode(data)
        except MCPError as exc:
            raise InvalidResponse(f"invalid JSON-RPC message on the SSE stream: {exc}") from exc
        if isinstance(message, Notification):
            await dispatch_notification(self.on_notification, message)
            return None
        if isinstance(message, Response):
            if message.id is None or message.id == request_id:
                return message
            logger.warning(
                "ignoring a response for id %r on the stream of %r", message.id, request_id
            )
            return None
        logger.warning("ignoring server request %r on an SSE stream (TR-HTTP-16)", message.method)
        return None


def _expect_response(raw: bytes, status: int) -> Response:
    try:
        message = decode(raw)
    except MCPError as exc:
        raise InvalidResponse(f"the HTTP {status} body is not a JSON-RPC message: {exc}") from exc
    if not isinstance(message, Response):
        raise InvalidResponse(f"the HTTP {status} body is not a JSON-RPC response")
    return message
