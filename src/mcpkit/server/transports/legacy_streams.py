"""Resumable SSE streams of a 2025-11-25 HTTP session (transports > Resumability and Redelivery).

A logical `EventStream` outlives the HTTP connections that carry it: a POST's response stream
(numbers 1, 2, ...) or the session's standalone GET stream (number 0). Every event gets the id
`<stream>-<seq>` (unique in the session, and it names its stream), the last `keep` events are kept,
and a GET with `Last-Event-ID` re-attaches a new connection that first replays what came after
that id. Disconnecting is not cancelling: the request keeps running and its events wait here.
"""

from __future__ import annotations

import asyncio
from collections import deque

from .asgi import SSE_HEADERS, Send


class EventStream:
    """Numbered events with a replay window; at most one connection (`owner`) drains it.

    Also the `Outbox` of the request whose response it carries (or of the whole session).
    """

    __slots__ = ("_wake", "answered", "done", "events", "number", "owner", "released", "seq")

    def __init__(self, number: int, keep: int) -> None:
        self.number = number
        self.seq = 0
        self.events: deque[tuple[int, bytes]] = deque(maxlen=keep)
        self.done = False  # no more events will come (answered, cancelled or session closed)
        self.answered = False  # the last event is the JSON-RPC response
        self.released = False  # the handler asked to drop the current connection (SEP-1699)
        self.owner: object | None = None
        self._wake: asyncio.Event | None = None  # made when a reader first waits

    def _woken(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def _waiter(self) -> asyncio.Event:
        """The event a reader waits on, cleared."""
        if self._wake is None:
            self._wake = asyncio.Event()
        else:
            self._wake.clear()
        return self._wake

    # -- Outbox ---------------------------------------------------------------------------------
    def send(self, data: bytes) -> None:
        if self.done:
            return
        self.seq += 1
        self.events.append((self.seq, data))
        self._woken()

    def finish(self, data: bytes | None) -> None:
        if self.done:
            return
        if data is not None:
            self.send(data)
            self.answered = True
        self.done = True
        self._woken()

    def release(self) -> None:
        self.released = True
        self._woken()

    def close(self) -> None:
        self.done = True
        self._woken()

    # -- reading --------------------------------------------------------------------------------
    def event_id(self, seq: int) -> bytes:
        return f"{self.number}-{seq}".encode()

    def after(self, seq: int) -> list[tuple[int, bytes]]:
        return [e for e in self.events if e[0] > seq]

    @property
    def only_response(self) -> bytes | None:
        """The response, when it is the only thing the stream ever carried (answer as JSON)."""
        if self.done and self.answered and self.seq == 1 and self.events:
            return self.events[0][1]
        return None

    async def started(self) -> None:
        """Wait until there is something to send, an end, or a release."""
        while not (self.seq or self.done or self.released):
            await self._waiter().wait()

    async def pump(self, send: Send, after: int, owner: object, keepalive: float | None) -> int:
        """Write events after `after` to one connection until the stream ends, the handler
        releases the connection, or another connection takes over. The last seq written."""
        while True:
            wake = self._waiter()
            for seq, data in self.after(after):
                await send(
                    {
                        "type": "http.response.body",
                        "body": b"id: " + self.event_id(seq) + b"\ndata: " + data + b"\n\n",
                        "more_body": True,
                    }
                )
                after = seq
            if self.done or self.owner is not owner:
                break
            if self.released:
                self.released = False
                break
            try:
                await asyncio.wait_for(wake.wait(), keepalive)
            except TimeoutError:
                await send(
                    {"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True}
                )
        await send({"type": "http.response.body", "body": b""})
        return after

    async def open(self, send: Send, after: int, retry_ms: int) -> None:
        """Start the SSE response: a priming event (id, empty data) with the `retry` field."""
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        prime = b"id: " + self.event_id(after) + b"\nretry: " + str(retry_ms).encode()
        await send(
            {"type": "http.response.body", "body": prime + b"\ndata: \n\n", "more_body": True}
        )


def parse_event_id(value: str) -> tuple[int, int] | None:
    """`<stream>-<seq>` → (stream, seq); None for anything we did not hand out."""
    number, sep, seq = value.strip().partition("-")
    if not sep or not number.isdigit() or not seq.isdigit():
        return None
    return int(number), int(seq)
