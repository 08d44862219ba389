"""Plain ASGI plumbing shared by the HTTP transports: types, JSON answers, disconnects."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from ..protocol.errors import MCPError
from ..protocol.jsonrpc import encode_error

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

JSON_HEADERS = [(b"content-type", b"application/json")]
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),  # TR-HTTP-19
]


async def send_json(
    send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [*JSON_HEADERS, (b"content-length", str(len(body)).encode())]
    if extra:
        headers.extend(extra)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def send_error(
    send: Send, exc: MCPError, request_id: Any = None, status: int | None = None
) -> None:
    await send_json(send, status or exc.http_status, encode_error(request_id, exc))


def header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")  # type: ignore[no-any-return]
    return None


async def cancel_on_disconnect(receive: Receive, task: asyncio.Task[Any]) -> None:
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            task.cancel()
            return


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body; None when it is over `limit` bytes."""
    msg = await receive()
    body: bytes = msg.get("body", b"")
    if not msg.get("more_body"):
        return body if len(body) <= limit else None
    chunks = [body]
    size = len(body)
    while msg.get("more_body"):
        msg = await receive()
        if msg["type"] == "http.disconnect":
            return b""
        chunk = msg.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
