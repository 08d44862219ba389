"""`subscriptions/listen` on Streamable HTTP: one long-lived SSE stream of change notifications,
with keep-alive comments, ended by the server (final result) or by the client going away.
`ListenBudget` caps the listen streams of both eras (2025-11-25: GET) below the connection
cap, so that calls always find room (see `budget`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from ...protocol.errors import MCPError, ServerBusy
from ...protocol.jsonrpc import dumps
from ..session_core import listen_frames
from .asgi import SSE_HEADERS, Receive, Send, cancel_on_disconnect, send_error
from .budget import RefusalLog

if TYPE_CHECKING:
    from ..admission import ServerRequest
    from ..server import Server


log = logging.getLogger("mcpkit.http")


class ListenBudget:
    """Open listen streams, at most `cap` (None: no cap); past it, 503 + Retry-After."""

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self.open = 0
        self.refusals = RefusalLog(log, "listen stream")

    async def hold(self, stream: Coroutine[Any, Any, None], send: Send, request_id: Any) -> None:
        """Serve `stream` within the cap, or refuse it."""
        cap = self.cap
        if cap is not None and self.open >= cap:
            stream.close()
            self.refusals.refused(
                f"listen-stream cap {cap:,} reached; raise max_listen_streams (mcpkit run "
                "--max-listen-streams) and the descriptor limit (ulimit -n), or add instances"
            )
            busy = ServerBusy("Too many listen streams open here; try again later")
            await send_error(send, busy, request_id)
            return
        self.open += 1
        try:
            await stream
        finally:
            self.open -= 1


async def listen_stream(
    server: Server, msg: ServerRequest, keepalive: float, receive: Receive, send: Send
) -> None:
    """A listen stream as SSE (`listen_frames`), ended by the server or the client leaving."""
    try:
        sub = await server.open_subscription(msg)
    except MCPError as exc:
        await send_error(send, exc, msg.id)
        return
    task = asyncio.current_task()
    assert task is not None
    watcher = asyncio.get_running_loop().create_task(cancel_on_disconnect(receive, task))
    frames = listen_frames(sub, msg.id, keepalive)
    try:
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        async for frame in frames:
            body = b": keep-alive\n\n" if frame is None else b"data: " + dumps(frame) + b"\n\n"
            await send({"type": "http.response.body", "body": body, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
    except asyncio.CancelledError:
        if watcher.done() and not watcher.cancelled():
            task.uncancel()
            return
        raise
    finally:
        await frames.aclose()
        server.subscriptions.close(sub)
        if not watcher.done():
            watcher.cancel()
