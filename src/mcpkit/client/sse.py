"""An incremental Server-Sent Events parser (the WHATWG event-stream format).

Feed it raw byte chunks as they arrive; it returns the complete events. Lines end in
CRLF, LF or CR; `data:` lines accumulate (joined with newlines); lines starting with `:`
are comments and are ignored (keep-alives, TR-HTTP-21); a blank line ends an event.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SSEEvent", "SSEParser"]


@dataclass(frozen=True, slots=True)
class SSEEvent:
    data: str
    event: str = "message"
    id: str | None = None


class SSEParser:
    """Turns a byte stream into `SSEEvent`s. Not thread-safe; one per stream."""

    __slots__ = ("_buffer", "_data", "_event", "_id", "_started", "retry_ms")

    def __init__(self) -> None:
        #: The last `retry:` value (ms) the server sent, for reconnecting (legacy resumption).
        self.retry_ms: int | None = None
        self._buffer = bytearray()
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._started = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Add bytes; return the events completed by them."""
        self._buffer += chunk
        events: list[SSEEvent] = []
        buf = self._buffer
        start = 0
        size = len(buf)
        while start < size:
            lf = buf.find(b"\n", start)
            cr = buf.find(b"\r", start, lf if lf >= 0 else size)
            if cr >= 0:
                if cr + 1 == size:
                    break  # a CR at the end may be the first half of CRLF: wait for more
                end, nxt = cr, cr + 2 if buf[cr + 1] == 0x0A else cr + 1
            elif lf >= 0:
                end, nxt = lf, lf + 1
            else:
                break
            self._line(bytes(buf[start:end]), events)
            start = nxt
        del buf[:start]
        return events

    def finish(self) -> list[SSEEvent]:
        """End of stream: flush a last line and any event not closed by a blank line.

        The SSE standard drops such an unterminated event; we keep it, to be lenient with
        servers that close the stream right after the final `data:` line.
        """
        events: list[SSEEvent] = []
        if self._buffer:
            line = bytes(self._buffer).rstrip(b"\r")
            self._buffer.clear()
            self._line(line, events)
        self._line(b"", events)
        return events

    def _line(self, raw: bytes, events: list[SSEEvent]) -> None:
        if not self._started:
            self._started = True
            if raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]  # a leading UTF-8 BOM is ignored
        if not raw:
            if self._data:
                events.append(SSEEvent("\n".join(self._data), self._event or "message", self._id))
            self._data = []
            self._event = ""
            return
        if raw[0] == 0x3A:  # ":" comment
            return
        line = raw.decode("utf-8", errors="replace")
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\x00" not in value:
            self._id = value
        elif name == "retry" and value.isdigit():
            self.retry_ms = int(value)
        # unknown fields are ignored

    @property
    def last_event_id(self) -> str | None:
        """The last event id seen, even on an event without data (a priming event)."""
        return self._id
