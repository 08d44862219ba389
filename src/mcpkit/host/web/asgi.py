"""The few ASGI pieces the web UI needs, by hand: a request (headers, query, a bounded JSON
body), plain and JSON responses, the package's static files, and a server-sent event stream
that ends when the page goes away."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

import orjson

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]

MAX_BODY = 2 * 1024 * 1024
_TYPES = {
    ".html": b"text/html; charset=utf-8",
    ".js": b"text/javascript; charset=utf-8",
    ".css": b"text/css; charset=utf-8",
    ".svg": b"image/svg+xml",
}


class HTTPError(Exception):
    """Answered as `{"error": message}` with `status`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(slots=True)
class Request:
    scope: Scope
    receive: Receive

    @property
    def method(self) -> str:
        return str(self.scope["method"])

    @property
    def path(self) -> str:
        return str(self.scope["path"])

    def header(self, name: str) -> str | None:
        key = name.lower().encode()
        for k, v in self.scope.get("headers") or []:
            if k == key:
                return bytes(v).decode("latin-1")
        return None

    def query(self, name: str) -> str | None:
        values = parse_qs(bytes(self.scope.get("query_string") or b"").decode("latin-1"))
        found = values.get(name)
        return found[0] if found else None

    async def json(self) -> Any:
        body = bytearray()
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                raise HTTPError(400, "the request ended early")
            body += message.get("body", b"")
            if len(body) > MAX_BODY:
                raise HTTPError(413, "the request body is too large")
            if not message.get("more_body"):
                break
        try:
            return orjson.loads(body) if body else {}
        except orjson.JSONDecodeError:
            raise HTTPError(400, "the request body is not JSON") from None


async def respond(
    send: Send, status: int, body: bytes, content_type: bytes, headers: Headers | None = None
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def respond_json(
    send: Send, value: Any, status: int = 200, headers: Headers | None = None
) -> None:
    await respond(send, status, orjson.dumps(value), b"application/json", headers)


async def respond_text(send: Send, status: int, text: str, headers: Headers | None = None) -> None:
    await respond(send, status, text.encode(), b"text/plain; charset=utf-8", headers)


def static_file(name: str) -> tuple[bytes, bytes] | None:
    """A file shipped in `static/` (flat names only: nothing outside it can be named)."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        return None
    suffix = name[name.rfind(".") :] if "." in name else ""
    if suffix not in _TYPES:
        return None
    try:
        data = resources.files(__package__).joinpath("static", name).read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    return data, _TYPES[suffix]


async def stream_events(
    receive: Receive,
    send: Send,
    events: AsyncIterator[bytes],
    headers: Headers,
    keepalive: float = 15.0,
) -> None:
    """A `text/event-stream` of `events`, with a comment every `keepalive` seconds, until the
    client disconnects or `events` ends."""
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/event-stream"), *headers],
        }
    )
    gone = asyncio.Event()

    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        gone.set()

    watcher = asyncio.create_task(watch())
    iterator = aiter(events)
    step: asyncio.Future[Any] | None = None
    try:
        await send({"type": "http.response.body", "body": b"retry: 1000\n\n", "more_body": True})
        while not gone.is_set():
            if step is None:
                step = asyncio.ensure_future(anext(iterator))
            stop: asyncio.Future[Any] = asyncio.ensure_future(gone.wait())
            done, _ = await asyncio.wait(
                {step, stop}, timeout=keepalive, return_when="FIRST_COMPLETED"
            )
            stop.cancel()
            if step in done:
                try:
                    chunk = step.result()
                except StopAsyncIteration:
                    break
                step = None
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            elif not gone.is_set():
                await send({"type": "http.response.body", "body": b": ping\n\n", "more_body": True})
        with contextlib.suppress(OSError):
            await send({"type": "http.response.body", "body": b""})
    finally:
        watcher.cancel()
        if step is not None:
            step.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await step
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()
