"""One vocabulary for HTTP failures, whichever stack met them (aiohttp or the lean `h1` pool),
on the modern and the legacy paths alike. What matters to a caller is how far the request got:

- `ConnectFailed`: no connection was made; the request certainly never reached the server.
- `ConnectionClosed`: the request was sent and the connection closed before any answer.
- `StreamBroken`: the response began (status and headers) and its body broke off.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import AsyncIterator
from typing import Any, NoReturn, Protocol
from urllib.parse import urlsplit

import aiohttp

from ..protocol.errors import MCPError, error_from_wire
from ..protocol.jsonrpc import Response, decode
from .errors import ClientError, ConnectFailed, ConnectionClosed, StreamBroken, TransportError

__all__ = [
    "EXPECTED_CONTENT",
    "connect_failed",
    "failure",
    "raise_http_error",
    "unexpected_content",
]

_MAX_ERROR_BODY = 64 * 1024


class _Body(Protocol):
    def iter_any(self) -> AsyncIterator[bytes]: ...


class ErrorResponse(Protocol):
    """What `raise_http_error` reads of a response: aiohttp's, or the lean pool's."""

    @property
    def status(self) -> int: ...

    @property
    def reason(self) -> str | None: ...

    @property
    def content(self) -> _Body: ...


EXPECTED_CONTENT = ("application/json", "text/event-stream")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else url


def _connect_reason(exc: BaseException, timeout: float | None = None) -> str:
    if isinstance(exc, aiohttp.ClientConnectorError):
        exc = exc.os_error
    if isinstance(exc, (TimeoutError, aiohttp.ConnectionTimeoutError)):
        return f"no connection within {timeout:g} s" if timeout else "the connection timed out"
    if isinstance(exc, socket.gaierror):
        return f"the host name does not resolve ({exc.strerror or exc})"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (is the server running?)"
    if isinstance(exc, ssl.SSLError):
        return f"the TLS handshake failed ({exc.reason or exc})"
    return str(exc) or type(exc).__name__


def connect_failed(url: str, exc: BaseException, timeout: float | None = None) -> ConnectFailed:
    reason = _connect_reason(exc, timeout)
    if isinstance(exc, aiohttp.ClientProxyConnectionError):
        reason = f"the proxy {exc.host}:{exc.port} is unreachable: {reason}"
    return ConnectFailed(f"cannot connect to {_origin(url)}: {reason}")


def failure(url: str, exc: BaseException, *, answered: bool) -> ClientError:
    """An aiohttp or socket error as one of ours. `answered`: the response head had arrived."""
    if isinstance(exc, ClientError):
        return exc
    if isinstance(exc, (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)):
        return connect_failed(url, exc)
    lost = (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)
    if isinstance(exc, (*lost, OSError)):
        if answered:
            return StreamBroken(f"the response from {_origin(url)} broke off before its end")
        return ConnectionClosed(f"the connection to {_origin(url)} closed before any answer")
    return TransportError(f"the HTTP request to {url} failed: {exc}")


def unexpected_content(url: str, status: int, content_type: str) -> TransportError:
    """A 2xx answer that is neither JSON nor an SSE stream (an HTML page from a proxy, ...)."""
    shown = repr(content_type) if content_type else "no Content-Type"
    return TransportError(
        f"unexpected Content-Type {shown} in the HTTP {status} response from {url} "
        f"(expected {' or '.join(EXPECTED_CONTENT)}): is this an MCP endpoint?",
        status=status,
    )


async def raise_http_error(resp: ErrorResponse) -> NoReturn:
    """Non-2xx: raise the body's JSON-RPC error (with `http_status`), else TransportError."""
    raw = bytearray()
    async for chunk in resp.content.iter_any():
        raw += chunk
        if len(raw) >= _MAX_ERROR_BODY:
            break
    if raw.strip():
        try:
            message: Any = decode(raw)
        except MCPError:
            message = None
        if isinstance(message, Response) and message.is_error:
            error = error_from_wire(message.error)
            error.http_status = resp.status
            raise error
    text = raw.decode("utf-8", errors="replace").strip()
    reason = f" {resp.reason}" if resp.reason else ""
    detail = f": {text[:200]}" if text else ""
    raise TransportError(f"HTTP {resp.status}{reason}{detail}", status=resp.status, body=text)
