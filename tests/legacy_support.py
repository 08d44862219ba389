"""Test helpers for the 2025-11-25 session wire: an in-process session client over ASGI that
sees SSE event ids, and `record`, which checks each server message against the 2025-11-25
schema as it arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from support import Receive, asgi_scope, scaled
from support import record as record_as

V25 = "2025-11-25"
_recording = [True]


def record(method: str, message: dict[str, Any]) -> None:
    """A message the server sent on the session wire: valid 2025-11-25, or the test fails."""
    if _recording[0]:
        record_as(method, message, V25)


@contextlib.contextmanager
def not_recorded() -> Iterator[None]:
    """For measurements of the server's own memory and time: no checks meanwhile."""
    _recording[0] = False
    try:
        yield
    finally:
        _recording[0] = True


def init_message(
    caps: dict[str, Any] | None = None, version: str = V25, id: Any = 0
) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": caps if caps is not None else {},
            "clientInfo": {"name": "legacy-tests", "version": "0"},
        },
    }


@dataclass
class Event:
    id: str | None = None
    retry: int | None = None
    data: dict[str, Any] | None = None


@dataclass
class Conn:
    """One HTTP exchange driven in-process: status, headers, then body chunks as they come."""

    method: str
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    ended: bool = False
    events: asyncio.Queue[Event | None] = field(default_factory=asyncio.Queue)
    _buffer: bytes = b""
    _started: asyncio.Event = field(default_factory=asyncio.Event)

    async def send(self, msg: dict[str, Any]) -> None:
        if msg["type"] == "http.response.start":
            self.status = msg["status"]
            self.headers = {k.decode(): v.decode() for k, v in msg["headers"]}
            self._started.set()
            return
        chunk = msg.get("body", b"")
        self.body += chunk
        if self.headers.get("content-type", "").startswith("text/event-stream"):
            self._buffer += chunk
            while b"\n\n" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\n\n", 1)
                event = parse_event(raw)
                if event is not None:
                    if event.data is not None:
                        record(self.method, event.data)
                    await self.events.put(event)
        if not msg.get("more_body"):
            self.ended = True
            await self.events.put(None)

    async def started(self) -> None:
        await asyncio.wait_for(self._started.wait(), scaled(5))

    async def next(self, timeout: float = 5.0) -> Event | None:
        return await asyncio.wait_for(self.events.get(), scaled(timeout))

    async def next_message(self, timeout: float = 5.0) -> dict[str, Any]:
        """The next event with data (priming events and comments skipped)."""
        while True:
            event = await self.next(timeout)
            assert event is not None, "the stream ended"
            if event.data is not None:
                return event.data

    @property
    def json(self) -> dict[str, Any]:
        message: dict[str, Any] = orjson.loads(self.body)
        return message


def parse_event(raw: bytes) -> Event | None:
    event = Event()
    seen = False
    data: list[bytes] = []
    for line in raw.split(b"\n"):
        if line.startswith(b":"):
            continue
        name, _, value = line.partition(b":")
        value = value[1:] if value.startswith(b" ") else value
        seen = True
        if name == b"id":
            event.id = value.decode()
        elif name == b"retry":
            event.retry = int(value)
        elif name == b"data":
            data.append(value)
    joined = b"\n".join(data)
    if joined.strip():
        event.data = orjson.loads(joined)
    return event if seen else None


class SessionClient:
    """A 2025-11-25 client of one in-process ASGI app (no sockets)."""

    def __init__(self, app: Any, host: str = "127.0.0.1:8000") -> None:
        self.app = app
        self.host = host
        self.session_id: str | None = None
        self.tasks: list[asyncio.Task[None]] = []
        self._disconnects: list[asyncio.Event] = []

    def headers(self, **extra: str | None) -> dict[str, str]:
        h = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "host": self.host,
        }
        if self.session_id is not None:
            h["mcp-session-id"] = self.session_id
            h["mcp-protocol-version"] = V25
        for key, value in extra.items():
            name = key.replace("_", "-")
            if value is None:
                h.pop(name, None)
            else:
                h[name] = value
        return h

    async def open(
        self,
        message: dict[str, Any] | None,
        *,
        http_method: str = "POST",
        headers: dict[str, str] | None = None,
    ) -> Conn:
        """Start an exchange; returns once the response has started."""
        body = orjson.dumps(message) if message is not None else b""
        conn = Conn(message.get("method", "?") if message else http_method)
        receive = Receive(body)
        self._disconnects.append(receive.disconnect)
        hdrs = headers if headers is not None else self.headers()
        task = asyncio.create_task(
            self.app(asgi_scope(http_method, "/mcp", hdrs, len(body)), receive, conn.send)
        )
        conn.disconnect = receive.disconnect  # type: ignore[attr-defined]
        conn.task = task  # type: ignore[attr-defined]
        self.tasks.append(task)
        await conn.started()
        return conn

    async def call(self, message: dict[str, Any], **extra: str | None) -> Conn:
        """A whole exchange (the response must end by itself)."""
        conn = await self.open(message, headers=self.headers(**extra))
        await asyncio.wait_for(conn.task, scaled(5))  # type: ignore[attr-defined]
        if conn.headers.get("content-type", "").startswith("application/json") and conn.body:
            record(message.get("method", "?"), conn.json)
        return conn

    async def initialize(self, caps: dict[str, Any] | None = None, version: str = V25) -> Conn:
        conn = await self.call(init_message(caps, version))
        assert conn.status == 200, conn.body
        self.session_id = conn.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.call(note)).status == 202
        return conn

    async def request(self, method: str, params: dict[str, Any] | None = None, id: Any = 1) -> Any:
        conn = await self.call(
            {"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}}
        )
        assert conn.status == 200, conn.body
        if conn.headers["content-type"].startswith("text/event-stream"):
            final = [e.data for e in _drain(conn) if e.data is not None and "id" in e.data]
            return final[-1]
        return conn.json

    async def delete(self) -> Conn:
        conn = await self.open(None, http_method="DELETE")
        await asyncio.wait_for(conn.task, scaled(5))  # type: ignore[attr-defined]
        return conn

    async def close(self) -> None:
        for disconnect in self._disconnects:
            disconnect.set()
        for task in self.tasks:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, scaled(5))


def _drain(conn: Conn) -> list[Event]:
    out = []
    while not conn.events.empty():
        event = conn.events.get_nowait()
        if event is not None:
            out.append(event)
    return out


@contextlib.asynccontextmanager
async def session(app: Any, caps: dict[str, Any] | None = None) -> AsyncIterator[SessionClient]:
    client = SessionClient(app)
    await client.initialize(caps)
    try:
        yield client
    finally:
        await client.close()
