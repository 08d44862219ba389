"""One request to the Streamable HTTP endpoint, from its head to its answer: the headers the
transport reads (Host, Origin, Authorization, Content-Type and -Length, the session's), the
ones the body mirrors (for `admit`), and the answer, plain JSON switching to SSE on the first
notification. One object per request, read in one pass over the headers (the hot path)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from ...protocol import jsonrpc
from ..admission import MirroredHeaders
from .asgi import SSE_HEADERS, Receive, Send, send_json

if TYPE_CHECKING:
    from ..legacy.replay import ReplayStream
    from .legacy_http import HttpSession


class Exchange:
    """A request's head, read once; its 2025-11-25 session and stream once `attach`ed."""

    __slots__ = (
        "authorization",
        "ctype",
        "host",
        "last_event_id",
        "length",
        "mirrored",
        "origin",
        "receive",
        "send",
        "session",
        "session_id",
        "stream",
        "streaming",
    )

    def __init__(self, headers: list[tuple[bytes, bytes]], receive: Receive, send: Send) -> None:
        self.receive = receive
        self.send = send
        self.session: HttpSession | None = None
        self.stream: ReplayStream | None = None
        self.streaming = False
        host = ctype = None
        origin = session_id = authorization = last_event_id = None
        version = mcp_method = mcp_name = None
        params_headers: dict[str, str] | None = None
        length = -1
        for key, value in headers:  # locals in the loop, the attributes once after it
            if key == b"mcp-method":
                mcp_method = value.decode("latin-1")
            elif key == b"mcp-protocol-version":
                version = value.decode("latin-1").strip()
            elif key == b"mcp-name":
                mcp_name = value.decode("latin-1")
            elif key == b"host":
                host = value
            elif key == b"content-type":
                ctype = value
            elif key == b"content-length":
                length = int(value) if value.isdigit() else -2
            elif key == b"origin":
                origin = value.decode("latin-1")
            elif key == b"authorization":
                authorization = value.decode("latin-1")
            elif key.startswith(b"mcp-param-"):
                if params_headers is None:
                    params_headers = {}
                params_headers[key[10:].decode("latin-1")] = value.decode("latin-1")
            elif key == b"mcp-session-id":
                session_id = value.decode("latin-1")
            elif key == b"last-event-id":
                last_event_id = value.decode("latin-1")
        self.host: bytes | None = host
        self.ctype: bytes | None = ctype
        self.length = length  # -1: none given; -2: not a number
        self.origin: str | None = origin
        self.authorization: str | None = authorization
        self.session_id: str | None = session_id
        self.last_event_id: str | None = last_event_id
        self.mirrored = MirroredHeaders(version, mcp_method, mcp_name, params_headers)

    def attach(self, session: HttpSession) -> None:
        """The request belongs to this 2025-11-25 session: it answers on the next stream."""
        self.session = session
        self.stream = session.replay.next_stream()

    async def emit(self, method: str, params: dict[str, Any]) -> None:
        if not self.streaming:
            self.streaming = True
            await self.send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        data = jsonrpc.encode_notification(method, params)
        await self.send(
            {"type": "http.response.body", "body": b"data: " + data + b"\n\n", "more_body": True}
        )

    async def finish(
        self, body: bytes, status: int = 200, extra: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        if self.streaming:
            await self.send({"type": "http.response.body", "body": b"data: " + body + b"\n\n"})
            return
        await send_json(self.send, status, body, extra)


async def accepted(send: Send) -> None:
    """202, no body: a notification or response accepted (TR-HTTP-10/14)."""
    await send(
        {"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]}
    )
    with contextlib.suppress(Exception):  # the client may be gone already
        await send({"type": "http.response.body", "body": b""})
