"""A long-running tool as a task (the io.modelcontextprotocol/tasks extension).

mcpkit run examples/tasks_server.py --transport http --port 8000
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from mcpkit import Context, Server, TaskStore

server = Server("indexer", tasks=TaskStore(ttl_seconds=3600, poll_interval_ms=500))


class Confirm(BaseModel):
    drop_old: bool


@server.tool(task="optional")  # "required": clients without the extension get -32021
async def rebuild_index(shard: str, ctx: Context) -> str:
    """Rebuild one search shard (minutes, on a real one)."""
    answer = await ctx.elicit(f"Drop the old index of {shard}?", Confirm)  # input_required
    if not answer.accepted or not answer.data.drop_old:
        return f"{shard}: kept the old index"
    ctx.set_status(f"rebuilding {shard}")  # the task's statusMessage
    await asyncio.sleep(0.01)
    return f"{shard}: rebuilt"


if __name__ == "__main__":
    server.run()
