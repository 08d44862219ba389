"""What the proxy and gateway tests share: serving an mcpkit server over real HTTP inside the
test's loop, and answers for the questions backends ask."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import uvicorn

from mcpkit.client import Client
from mcpkit.client.inputs import Elicitation
from oauth_server import loopback_socket
from support import scaled


@contextlib.asynccontextmanager
async def serving(server: Any, sock: Any = None, **options: Any) -> AsyncIterator[str]:
    """`server` over Streamable HTTP on a loopback port of its own (lifespan included): its URL.
    The socket listens before uvicorn starts, so clients may connect at once (`sock`: one
    made beforehand, when the server's config needs its own URL)."""
    sock = sock if sock is not None else loopback_socket()
    config = uvicorn.Config(
        server.http_app(**options), lifespan="on", log_level="warning", access_log=False
    )
    http = uvicorn.Server(config)
    task = asyncio.create_task(http.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        http.should_exit = True
        await task
        sock.close()


class Answers:
    """An elicitation handler that answers from a script and records what it was asked."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies = list(replies)
        self.asked: list[str] = []

    async def __call__(self, request: Elicitation) -> dict[str, Any]:
        self.asked.append(request.message)
        if not self.replies:
            return {"action": "decline"}
        return self.replies.pop(0)


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}


async def settled(client: Client, task_id: str) -> dict[str, Any]:
    """Poll a front task as a client does (TASK-09) until it ends: its last `tasks/get`."""
    async with asyncio.timeout(scaled(30)):
        while True:
            task = await client.request("tasks/get", {"taskId": task_id}, use_cache=False)
            if task["status"] not in ("working", "input_required"):
                return task
            await asyncio.sleep(0.05)  # polling a task is its protocol (pollIntervalMs)
