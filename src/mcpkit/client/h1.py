"""A small HTTP/1.1 keep-alive client for the request hot path: one POST, one response.

`HttpTransport.request()` spends most of its time in aiohttp's general machinery (cookies,
redirects, tracing, multidicts, timeouts). For the one exchange MCP repeats (a POST of a JSON
body, answered with JSON or an SSE stream) this pool writes the request in one `write()` and
parses the response with httptools (C, as uvicorn does). Responses expose the few attributes
`HttpTransport` reads (`status`, `reason`, `content_type`, `headers`, `read()`,
`content.iter_any()`, `close()`), so the same response handling serves both paths. Everything
else (auth, GET streams, legacy sessions, redirects) stays on aiohttp.
"""

from __future__ import annotations

import asyncio
import select
import socket
import ssl
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import httptools

from .http_failures import connect_failed

__all__ = ["H1Pool", "H1Response"]


#: A connection idle this long is checked for a close from the server before it is reused.
_CHECK_AFTER = 0.1


def peer_closed(transport: asyncio.BaseTransport | None) -> bool:
    """The server closed (or wrote to) this idle connection and the loop has not seen it yet:
    a request written now would be lost, and a POST must not be sent twice (RFC 9112 §9.3.1).
    As urllib3 does, poll the socket without waiting: readable while idle means EOF."""
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is None:
        return transport is None
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


class H1Response:
    """One response, its body arriving as the connection reads it."""

    __slots__ = ("_conn", "_pool", "chunks", "content", "done", "headers", "reason", "status")

    def __init__(self, conn: H1Connection, pool: H1Pool) -> None:
        self._conn: H1Connection | None = conn
        self._pool = pool
        self.status = 0
        self.reason = ""
        self.headers: dict[str, str] = {}
        self.chunks: deque[bytes] = deque()
        self.done = False
        self.content = self  # aiohttp's `resp.content.iter_any()`

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    async def read(self) -> bytes:
        parts = [chunk async for chunk in self.iter_any()]
        return parts[0] if len(parts) == 1 else b"".join(parts)

    async def iter_any(self) -> AsyncIterator[bytes]:
        while True:
            while self.chunks:
                yield self.chunks.popleft()
            if self.done:
                self.release()
                return
            conn = self._conn
            if conn is None:
                raise ConnectionResetError("the connection closed before the response ended")
            await conn.wait()

    def release(self) -> None:
        """Return the connection to the pool once the whole response was read."""
        conn, self._conn = self._conn, None
        if conn is not None:
            self._pool.put(conn, reusable=self.done)

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
            self._pool.put(conn, reusable=False)

    async def __aenter__(self) -> H1Response:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._conn is not None:
            self.close() if not self.done else self.release()


class H1Connection(asyncio.Protocol):
    """One connection; httptools calls back into it as bytes arrive."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.response: H1Response | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.error: BaseException | None = None
        self.keep_alive = True
        self.idle_since = 0.0
        self._name = b""

    # -- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(ConnectionResetError(f"invalid HTTP response: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self._fail(exc or ConnectionResetError("the server closed the connection"))

    # -- httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        if self.response is not None:
            key = name.decode("latin-1").lower()
            old = self.response.headers.get(key)
            text = value.decode("latin-1")
            self.response.headers[key] = text if old is None else f"{old}, {text}"

    def on_headers_complete(self) -> None:
        resp = self.response
        if resp is not None:
            resp.status = self.parser.get_status_code()
            self.keep_alive = self.parser.should_keep_alive()
            self._wake()

    def on_status(self, status: bytes) -> None:
        if self.response is not None:
            self.response.reason = status.decode("latin-1")

    def on_body(self, body: bytes) -> None:
        if self.response is not None:
            self.response.chunks.append(body)
            self._wake()

    def on_message_complete(self) -> None:
        if self.response is not None:
            self.response.done = True
            self._wake()

    # -- used by the pool and the response
    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _fail(self, exc: BaseException) -> None:
        self.keep_alive = False
        if self.error is None:
            self.error = exc
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    async def wait(self) -> None:
        if self.error is not None:
            raise self.error
        self.waiter = asyncio.get_running_loop().create_future()
        try:
            await self.waiter
        finally:
            self.waiter = None

    def close(self) -> None:
        self.keep_alive = False
        if self.transport is not None:
            self.transport.close()


class H1Pool:
    """Keep-alive connections to the origin of one URL; POSTs to that URL's path."""

    def __init__(
        self, url: str, *, connect_timeout: float | None, limit: int, keepalive: float = 4.0
    ) -> None:
        self.url = url
        parts = urlsplit(url)
        self.host = parts.hostname or "localhost"
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.ssl: ssl.SSLContext | None = (
            ssl.create_default_context() if parts.scheme == "https" else None
        )
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        default_port = self.port == (443 if self.ssl else 80)
        authority = self.host if ":" not in self.host else f"[{self.host}]"
        host_header = authority if default_port else f"{authority}:{self.port}"
        self._head = f"POST {target} HTTP/1.1\r\nHost: {host_header}\r\n".encode("latin-1")
        self.connect_timeout = connect_timeout
        self.keepalive = keepalive
        self._idle: list[H1Connection] = []
        self._slots = asyncio.Semaphore(limit)

    async def _connect(self) -> H1Connection:
        loop = asyncio.get_running_loop()
        connect = loop.create_connection(
            H1Connection,
            self.host,
            self.port,
            ssl=self.ssl,
            server_hostname=self.host if self.ssl else None,
        )
        try:
            _, conn = await asyncio.wait_for(connect, self.connect_timeout)
        except (OSError, TimeoutError) as exc:  # refused, DNS, TLS, connect timeout
            raise connect_failed(self.url, exc, self.connect_timeout) from exc
        return conn

    async def post(self, headers: Mapping[str, str], body: bytes) -> H1Response:
        """Send the POST; return once the response head arrived (the body streams after).

        A connection that closes before the head is a `ConnectionError` for the caller to judge:
        the server may have received and run the request, so it is never sent again here.
        Idle connections are reused for `keepalive` seconds only, under the usual server idle
        timeouts, so that a connection the server is closing is rarely picked."""
        data = self._request(headers, body)
        await self._slots.acquire()
        try:
            conn = self._idle_conn() or await self._connect()
        except BaseException:
            self._slots.release()
            raise
        resp = H1Response(conn, self)
        conn.response = resp
        try:
            assert conn.transport is not None
            conn.transport.write(data)
            while not resp.status:
                await conn.wait()
            return resp
        except BaseException:
            resp.close()  # cancelled or failed before the head: the connection goes (CANC-04)
            raise

    def _idle_conn(self) -> H1Connection | None:
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            idle, transport = now - conn.idle_since, conn.transport
            usable = transport is not None and conn.error is None and idle < self.keepalive
            if usable and (idle < _CHECK_AFTER or not peer_closed(transport)):
                return conn
            conn.close()
        return None

    def _request(self, headers: Mapping[str, str], body: bytes) -> bytes:
        lines = [self._head]
        for name, value in headers.items():
            if "\n" in value or "\r" in value or "\n" in name or "\r" in name:
                raise ValueError(f"newline in HTTP header {name!r}")
            lines.append(f"{name}: {value}\r\n".encode())
        lines.append(b"Content-Length: %d\r\n\r\n" % len(body))
        lines.append(body)
        return b"".join(lines)

    def put(self, conn: H1Connection, *, reusable: bool) -> None:
        conn.response = None
        if reusable and conn.keep_alive and conn.transport is not None and conn.error is None:
            conn.idle_since = time.monotonic()
            self._idle.append(conn)
        else:
            conn.close()
        self._slots.release()

    def close(self) -> None:
        for conn in self._idle:
            conn.close()
        self._idle.clear()
