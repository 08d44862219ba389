"""`Last-Event-ID` replay of a 2025-11-25 session (transports > Resumability and Redelivery),
with no I/O.

A session's messages travel on logical streams that outlive the HTTP connections carrying them:
each POST's response stream (numbers 1, 2, ...) and the standalone GET stream (number 0). Every
event gets the id `<stream>-<seq>` (unique in the session, and it names its stream), each stream
keeps its last `keep` events, and `Replay.find(last_event_id)` tells a new connection which
stream it carries and from where. Disconnecting is not cancelling: the request keeps running and
its events wait here until a connection takes them.

Nothing here waits, writes or knows ASGI: a transport sets a stream's `waker` (an object with
`set()`, such as an `asyncio.Event`) to learn that the stream changed, takes `after(seq)` and
writes it (`transports/legacy_streams.py`), and asks `ends_connection` when to stop.
"""

from __future__ import annotations

from collections import deque
from typing import Protocol

#: Finished streams kept per session for late resumption (the oldest finished go first).
MAX_STREAMS = 64


class Waker(Protocol):
    """How a stream tells the connection carrying it that something changed."""

    def set(self) -> None: ...


class ReplayStream:
    """Numbered events with a replay window; at most one connection (`owner`) carries it.

    Also the `Outbox` of the request whose response it carries (or of the whole session).
    """

    __slots__ = ("answered", "done", "events", "number", "owner", "released", "seq", "waker")

    def __init__(self, number: int, keep: int) -> None:
        self.number = number
        self.seq = 0
        self.events: deque[tuple[int, bytes]] = deque(maxlen=keep)
        self.done = False  # no more events will come (answered, cancelled or session closed)
        self.answered = False  # the last event is the JSON-RPC response
        self.released = False  # the handler asked to drop the current connection (SEP-1699)
        self.owner: object | None = None
        #: Set by the transport when a reader first waits (none on the plain-JSON path).
        self.waker: Waker | None = None

    def _changed(self) -> None:
        if self.waker is not None:
            self.waker.set()

    # -- Outbox ---------------------------------------------------------------------------------
    def send(self, data: bytes) -> None:
        if self.done:
            return
        self.seq += 1
        self.events.append((self.seq, data))
        self._changed()

    def finish(self, data: bytes | None) -> None:
        if self.done:
            return
        if data is not None:
            self.send(data)
            self.answered = True
        self.done = True
        self._changed()

    def release(self) -> None:
        self.released = True
        self._changed()

    def close(self) -> None:
        self.done = True
        self._changed()

    # -- carrying -------------------------------------------------------------------------------
    def take(self, owner: object) -> None:
        """`owner` (one connection) carries the stream from now on; the one that carried it
        until now is woken to stop, so no event goes out on two connections."""
        self.owner = owner
        self._changed()

    def let_go(self, owner: object) -> None:
        """`owner`'s connection ended; nobody carries the stream until a client resumes it."""
        if self.owner is owner:
            self.owner = None

    def ready(self) -> bool:
        """Something to send, an end, or a release: the first connection can decide."""
        return bool(self.seq or self.done or self.released)

    def ends_connection(self, owner: object) -> bool:
        """Once `owner` has written everything so far: whether its connection ends now (the
        stream is over, another connection took it, or the handler released it; a release
        is used up by the connection it ended)."""
        if self.done or self.owner is not owner:
            return True
        if self.released:
            self.released = False
            return True
        return False

    def delivered(self, last: int) -> bool:
        """Whether a connection that wrote up to `last` delivered the whole, finished stream
        (nothing is left to resume)."""
        return self.done and last == self.seq

    # -- reading --------------------------------------------------------------------------------
    def event_id(self, seq: int) -> bytes:
        return f"{self.number}-{seq}".encode()

    def after(self, seq: int) -> list[tuple[int, bytes]]:
        """The kept events after `seq`, oldest first."""
        return [e for e in self.events if e[0] > seq]

    @property
    def only_response(self) -> bytes | None:
        """The response, when it is the only thing the stream ever carried (answer as JSON)."""
        if self.done and self.answered and self.seq == 1 and self.events:
            return self.events[0][1]
        return None

    @property
    def cancelled_silently(self) -> bool:
        """Ended before carrying anything (a cancelled request: no response, 202)."""
        return self.done and self.seq == 0


class Replay:
    """The streams of one session a client may resume: the standalone stream and the response
    streams of its POSTs, finished ones kept up to `max_streams`."""

    __slots__ = ("_next", "keep", "max_streams", "standalone", "streams")

    def __init__(self, keep: int, max_streams: int = MAX_STREAMS) -> None:
        self.keep = keep
        self.max_streams = max_streams
        self.streams: dict[int, ReplayStream] = {}
        self.standalone: ReplayStream | None = None
        self._next = 0

    def next_stream(self) -> ReplayStream:
        """The stream a POST's answer would go on; `hold` it once it cannot answer as JSON."""
        self._next += 1
        return ReplayStream(self._next, self.keep)

    def hold(self, stream: ReplayStream) -> None:
        """Keep `stream` for resumption; past `max_streams`, the older half of the finished
        ones is forgotten (a stream in progress is never dropped)."""
        self.streams[stream.number] = stream
        if len(self.streams) > self.max_streams:
            finished = [n for n, s in self.streams.items() if s.done]
            for number in finished[: -self.max_streams // 2]:
                del self.streams[number]

    def forget(self, stream: ReplayStream) -> None:
        """Nothing of `stream` is left to resume (delivered, or answered otherwise)."""
        if stream.number:
            self.streams.pop(stream.number, None)

    def open_standalone(self) -> ReplayStream:
        """The session's GET stream (number 0), made on first use."""
        if self.standalone is None:
            self.standalone = ReplayStream(0, self.keep)
        return self.standalone

    def end_standalone(self) -> None:
        """The GET stream ends, and stays ended: a GET from now on ends at once (the instance
        is draining; its client initializes elsewhere)."""
        if self.standalone is not None:
            self.standalone.close()

    def find(self, last_event_id: str) -> tuple[ReplayStream, int] | None:
        """The stream a `Last-Event-ID` names and the seq to replay after; None for an id we
        did not hand out or whose stream is forgotten."""
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            return None
        number, seq = parsed
        stream = self.standalone if number == 0 else self.streams.get(number)
        return None if stream is None else (stream, seq)

    def close(self) -> None:
        """The session ended: every stream ends (their connections finish), none is kept."""
        for stream in self.streams.values():
            stream.close()
        self.streams.clear()
        if self.standalone is not None:
            self.standalone.close()
            self.standalone = None


def parse_event_id(value: str) -> tuple[int, int] | None:
    """`<stream>-<seq>` → (stream, seq); None for anything we did not hand out. ASCII digits
    only: `str.isdigit` also holds for `²` (a Latin-1 header byte), which `int` refuses."""
    number, sep, seq = value.strip().partition("-")
    digits = number + seq
    if not sep or not number or not seq or not digits.isascii() or not digits.isdigit():
        return None
    return int(number), int(seq)
