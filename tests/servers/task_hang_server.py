"""A stdio server whose tool runs as a task and never finishes, for deadline tests: the host
must cancel it with `tasks/cancel` (the tasks extension), which `was_cancelled` reports.
`give_up` is a task its server abandons: it ends `cancelled` without anyone asking."""

from __future__ import annotations

import asyncio

from mcpkit import Server, TaskStore

server = Server("tasks-hang", tasks=TaskStore(ttl_seconds=60, poll_interval_ms=20))
cancelled = asyncio.Event()


@server.tool(task="required")
async def rebuild() -> str:
    """Rebuild everything (this one never finishes)."""
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        cancelled.set()
        raise
    return "never"


@server.tool(task="required")
async def give_up() -> str:
    """Start a job the server abandons (its task ends `cancelled`)."""
    raise asyncio.CancelledError  # the work stopped here: the task settles `cancelled`


@server.tool()
async def was_cancelled() -> bool:
    """Whether the rebuild task was cancelled (waits up to 10 s for it)."""
    try:
        await asyncio.wait_for(cancelled.wait(), 10)
    except TimeoutError:
        return False
    return True


if __name__ == "__main__":
    server.run("stdio")
