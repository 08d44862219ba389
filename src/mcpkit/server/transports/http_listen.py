"""`subscriptions/listen` on Streamable HTTP: one long-lived SSE stream of change notifications,
with keep-alive comments, ended by the server (final result) or by the client going away."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ...protocol import jsonrpc
from ...protocol.errors import MCPError
from ...protocol.jsonrpc import encode_result
from .asgi import SSE_HEADERS, Receive, Send, cancel_on_disconnect, send_error

if TYPE_CHECKING:
    from ..admission import ServerRequest
    from ..server import Server


async def listen(
    server: Server, msg: ServerRequest, keepalive: float, receive: Receive, send: Send
) -> None:
    try:
        sub = await server.open_subscription(msg)
    except MCPError as exc:
        await send_error(send, exc, msg.id)
        return
    task = asyncio.current_task()
    assert task is not None
    watcher = asyncio.get_running_loop().create_task(cancel_on_disconnect(receive, task))
    try:
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        await _sse(send, jsonrpc.dumps(sub.acknowledgement()))
        while True:
            try:
                note = await sub.next(keepalive)
            except EOFError:
                if not sub.overflowed:
                    await _sse(send, encode_result(msg.id, sub.final_result()), final=True)
                else:
                    await send({"type": "http.response.body", "body": b""})
                return
            if note is None:
                await send(
                    {"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True}
                )
            else:
                await _sse(send, jsonrpc.dumps(note))
    except asyncio.CancelledError:
        if watcher.done() and not watcher.cancelled():
            task.uncancel()
            return
        raise
    finally:
        server.subscriptions.close(sub)
        if not watcher.done():
            watcher.cancel()


async def _sse(send: Send, data: bytes, final: bool = False) -> None:
    await send(
        {"type": "http.response.body", "body": b"data: " + data + b"\n\n", "more_body": not final}
    )
