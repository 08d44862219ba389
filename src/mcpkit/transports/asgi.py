"""Plain ASGI plumbing shared by the HTTP transports: types, JSON answers, disconnects."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator, MutableMapping
from typing import Any, TypeVar

from ..protocol.errors import MCPError, ServerBusy
from ..protocol.jsonrpc import encode_error

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
T = TypeVar("T")

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


def error_headers(exc: MCPError) -> list[tuple[bytes, bytes]] | None:
    """`Retry-After` for a capacity refusal (503), nothing otherwise."""
    if isinstance(exc, ServerBusy):
        return [(b"retry-after", str(exc.retry_after).encode())]
    return None


async def send_error(
    send: Send, exc: MCPError, request_id: Any = None, status: int | None = None
) -> None:
    await send_json(
        send, status or exc.http_status, encode_error(request_id, exc), error_headers(exc)
    )


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


def first_step(coro: Coroutine[Any, Any, T]) -> tuple[bool, Any]:
    """Run a coroutine up to its first suspension, in the calling task: `(True, result)` when
    it finished without suspending, else `(False, what it is waiting on)` to pass to `resume`.
    Its exceptions propagate. (Python 3.12's eager tasks, done by hand for one await.)"""
    try:
        return False, coro.send(None)
    except StopIteration as done:
        return True, done.value


@types.coroutine
def resume(coro: Coroutine[Any, Any, T], waiting: Any) -> Generator[Any, Any, T]:
    """Await the rest of a coroutine that `first_step` left suspended on `waiting`, in the
    same task: the event loop waits on `waiting` exactly as if the coroutine were awaited
    directly, and cancellation is thrown into it."""
    while True:
        try:
            sent = yield waiting
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:
            try:
                waiting = coro.throw(exc)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
        else:
            try:
                waiting = coro.send(sent)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]


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
