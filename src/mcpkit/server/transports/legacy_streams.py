"""Writing a 2025-11-25 session's resumable streams onto HTTP connections as SSE.

What a stream holds, how its events are numbered, kept and found again after `Last-Event-ID`
is the session core's (`server/legacy/replay.py`, no I/O). This module only waits for a
stream to change (an `asyncio.Event` as its waker) and writes: the priming event, the events
after a seq, keep-alive comments, and the end of the response.
"""

from __future__ import annotations

import asyncio

from ..legacy.replay import ReplayStream
from .asgi import SSE_HEADERS, Send


def _waiter(stream: ReplayStream) -> asyncio.Event:
    """The event a reader waits on, cleared; made when a reader first waits (an answer that
    comes as plain JSON never needs one)."""
    wake = stream.waker
    if not isinstance(wake, asyncio.Event):
        wake = stream.waker = asyncio.Event()
    else:
        wake.clear()
    return wake


async def started(stream: ReplayStream) -> None:
    """Wait until there is something to send, an end, or a release."""
    while not stream.ready():
        await _waiter(stream).wait()


async def open_sse(stream: ReplayStream, send: Send, after: int, retry_ms: int) -> None:
    """Start the SSE response: a priming event (id, empty data) with the `retry` field."""
    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
    prime = b"id: " + stream.event_id(after) + b"\nretry: " + str(retry_ms).encode()
    await send({"type": "http.response.body", "body": prime + b"\ndata: \n\n", "more_body": True})


async def pump(
    stream: ReplayStream, send: Send, after: int, owner: object, keepalive: float | None
) -> int:
    """Write events after `after` to one connection until the stream ends, the handler
    releases the connection, or another connection takes over. The last seq written."""
    while True:
        wake = _waiter(stream)
        for seq, data in stream.after(after):
            await send(
                {
                    "type": "http.response.body",
                    "body": b"id: " + stream.event_id(seq) + b"\ndata: " + data + b"\n\n",
                    "more_body": True,
                }
            )
            after = seq
        if stream.ends_connection(owner):
            break
        try:
            await asyncio.wait_for(wake.wait(), keepalive)
        except TimeoutError:
            await send(
                {"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True}
            )
    await send({"type": "http.response.body", "body": b""})
    return after
