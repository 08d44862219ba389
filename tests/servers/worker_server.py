"""A server for `mcpkit run --workers`: each answer names the worker process that gave it.
With WORKER_TASKS=1 it also has a task tool (tasks in process memory unless --redis)."""

from __future__ import annotations

import os

from mcpkit import Context, Server

server = Server("workers")
NAMED = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@server.tool()
def pid() -> int:
    """The worker's process id."""
    return os.getpid()


@server.tool()
async def greet(ctx: Context) -> str:
    """Asks a name (MRTR): the retry may reach another worker."""
    answer = await ctx.elicit("Your name?", NAMED, key="name")
    return f"{answer.content['name']} {os.getpid()}"


if os.environ.get("WORKER_TASKS"):

    @server.tool(task="optional")
    async def job() -> str:
        """A task."""
        return "done"
