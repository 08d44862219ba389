"""What the page is told and asked: an event log that every open page replays and follows
(server-sent events), and the questions waiting for the user's answer.

Events are small JSON objects `{"kind": ..., ...}` numbered from 1; the log keeps the last
`keep` of them, so a page that reconnects (`Last-Event-ID`) or opens later sees the session
as it happened. Live-only events (the raw JSON-RPC trace) are not kept.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = ["Event", "EventHub", "Question", "Questions"]


@dataclass(frozen=True, slots=True)
class Event:
    id: int
    data: dict[str, Any]

    def encode(self) -> bytes:
        """One server-sent event."""
        return b"id: %d\ndata: %s\n\n" % (self.id, orjson.dumps(self.data))


class EventHub:
    def __init__(self, keep: int = 5000, queue_size: int = 10_000) -> None:
        self._log: deque[Event] = deque(maxlen=keep)
        self._ids = itertools.count(1)
        self._queues: set[asyncio.Queue[Event | None]] = set()
        self._queue_size = queue_size

    def publish(
        self, kind: str, data: dict[str, Any] | None = None, *, replay: bool = True, **fields: Any
    ) -> Event:
        """Send `{"kind": kind, **data, **fields}` to every page; `replay`: keep it in the log."""
        event = Event(next(self._ids), {"kind": kind, **(data or {}), **fields})
        if replay:
            self._log.append(event)
        for queue in list(self._queues):
            try:
                queue.put_nowait(event)
            except asyncio.QueueFull:
                # A page that stopped reading: end its stream; it reconnects and replays.
                self._queues.discard(queue)
                while not queue.empty():
                    queue.get_nowait()
                queue.put_nowait(None)
        return event

    def close(self) -> None:
        """End every follower's stream (the server is stopping)."""
        for queue in list(self._queues):
            while not queue.empty():
                queue.get_nowait()
            queue.put_nowait(None)
        self._queues.clear()

    def events(self, kind: str) -> list[dict[str, Any]]:
        """The kept events of one kind (oldest first)."""
        return [e.data for e in self._log if e.data["kind"] == kind]

    async def follow(self, after: int = 0) -> AsyncIterator[Event]:
        """The kept events after id `after`, then live ones; ends if the reader falls behind."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue(self._queue_size)
        backlog = [e for e in self._log if e.id > after]
        self._queues.add(queue)
        try:
            for event in backlog:
                yield event
            last = backlog[-1].id if backlog else after
            while True:
                item = await queue.get()
                if item is None:
                    return
                if item.id > last:
                    yield item
        finally:
            self._queues.discard(queue)


@dataclass(slots=True)
class Question:
    """Something only the user can answer: `consent`, `elicit` or `link`."""

    id: str
    kind: str
    future: asyncio.Future[Any] = field(repr=False)
    #: What the page showed (kept for checking the answer, e.g. the requested schema).
    detail: dict[str, Any] = field(default_factory=dict)


class Questions:
    """Open questions by id; the page's answer resolves the waiting host coroutine."""

    def __init__(self, hub: EventHub) -> None:
        self.hub = hub
        self.open: dict[str, Question] = {}

    async def ask(self, kind: str, **detail: Any) -> Any:
        """Publish a question and wait for its answer (cancelled: the question is withdrawn)."""
        qid = secrets.token_hex(8)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.open[qid] = Question(qid, kind, future, detail)
        self.hub.publish("question", id=qid, type=kind, **detail)
        try:
            return await future
        finally:
            self.open.pop(qid, None)
            self.hub.publish("answered", id=qid)

    def get(self, qid: str) -> Question | None:
        return self.open.get(qid)

    def answer(self, qid: str, value: Any) -> bool:
        question = self.open.get(qid)
        if question is None or question.future.done():
            return False
        question.future.set_result(value)
        return True
