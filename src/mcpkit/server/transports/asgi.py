"""Plain ASGI plumbing shared by the HTTP transports: types, JSON answers, disconnects."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator, MutableMapping
from typing import Any, TypeVar

from ...protocol.errors import InvalidRequest, MCPError, ServerBusy
from ...protocol.jsonrpc import encode_error, encode_unread_error

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
T = TypeVar("T")

_JSON_TYPE = (b"content-type", b"application/json")
JSON_HEADERS = [_JSON_TYPE]
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),  # TR-HTTP-19
]


async def send_json(
    send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [_JSON_TYPE, (b"content-length", b"%d" % len(body))]
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


def route_path(scope: Scope) -> str:
    """The request's path below the app's mount point. ASGI's `path` includes `root_path`
    (Starlette >= 0.33 and FastAPI `Mount`, uvicorn `--root-path`); older Starlette stripped
    it, leaving a `path` that does not start with `root_path`: both are handled."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        rest = path[len(root) :]
        if not rest or rest[0] == "/":
            return rest or "/"
    return path


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


class BodyRefused(Exception):
    """The body could not be read: too large (413), too slow (408), or the client left (no
    answer). `error` is what to answer with, None when there is no one to answer."""

    def __init__(self, error: MCPError | None) -> None:
        super().__init__(error.message if error is not None else "client disconnected")
        self.error = error


def too_large(limit: int) -> MCPError:
    return InvalidRequest(f"Request body too large (limit {limit} bytes)", http_status=413)


def too_slow(timeout: float) -> MCPError:
    return InvalidRequest(f"Request Timeout: the body stalled for {timeout:g} s", http_status=408)


async def read_body(receive: Receive, limit: int, timeout: float | None) -> bytes:
    """The whole request body, at most `limit` bytes, each part arriving within `timeout`
    seconds of the one before (nginx's `client_body_timeout`). The usual body, already
    received whole, is read without a timer. Raises `BodyRefused`."""
    if timeout is None:  # the server enforces it (serve_http): no work here
        msg = await receive()
    elif type(waiting := receive()) is types.CoroutineType:
        done, msg = first_step(waiting)
        if not done:
            msg = await _within(timeout, resume(waiting, msg))
    else:  # pragma: no cover - any other awaitable
        msg = await _within(timeout, waiting)
    if msg["type"] == "http.disconnect":
        raise BodyRefused(None)
    body: bytes = msg.get("body", b"")
    if not msg.get("more_body"):
        if len(body) > limit:
            raise BodyRefused(too_large(limit))
        return body
    chunks = [body]
    size = len(body)
    while msg.get("more_body"):
        msg = await (receive() if timeout is None else _within(timeout, receive()))
        if msg["type"] == "http.disconnect":
            raise BodyRefused(None)
        chunk = msg.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyRefused(too_large(limit))
        chunks.append(chunk)
    return b"".join(chunks)


async def _within(timeout: float | None, waiting: Awaitable[T]) -> T:
    try:
        async with asyncio.timeout(timeout):
            return await waiting
    except TimeoutError:
        assert timeout is not None
        raise BodyRefused(too_slow(timeout)) from None


async def send_refusal(send: Send, exc: MCPError) -> None:
    """Answer a message that was never (wholly) read: no `id` (BASE-11), and close the
    connection, which may still carry the rest of the body (413, 408)."""
    body = encode_unread_error(exc)
    headers = [
        *JSON_HEADERS,
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": exc.http_status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
