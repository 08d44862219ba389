"""One instance of a multi-instance deployment: Redis event bus, shared requestState keys
(MCPKIT_STATE_KEYS). `python cluster_server.py PORT REDIS_URL`."""

from __future__ import annotations

import asyncio
import sys

from mcpkit import Context, Server, TaskStore
from mcpkit.server.redis_backend import RedisEventBus

# Task ids start with this instance's prefix: what a load balancer routes tasks/* on (Mcp-Name).
server = Server(
    "cluster", event_bus=RedisEventBus(sys.argv[2]), tasks=TaskStore(id_prefix=f"{sys.argv[1]}.")
)


@server.resource("cluster://doc")
async def doc() -> str:
    return "doc"


@server.tool()
async def greet(ctx: Context) -> str:
    """Asks a name (MRTR)."""
    answer = await ctx.elicit(
        "Your name?",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    )
    return f"Hello, {answer.content['name']}! (answered on port {sys.argv[1]})"


@server.tool()
async def change(uri: str = "cluster://doc") -> str:
    """Changes the tool list and updates a resource."""
    server.notify_tools_changed()
    server.notify_resource_updated(uri)
    return "changed"


@server.tool()
async def subscription_count(wait_drained: bool = False) -> int:
    """Open listen streams on this instance (optionally once they have all closed)."""
    if wait_drained:
        await asyncio.wait_for(server.subscriptions.drained(), 10)
    return len(server.subscriptions)


@server.tool(task="optional")
async def job() -> str:
    """Runs as a task for clients with the tasks extension."""
    return f"done on port {sys.argv[1]}"


if __name__ == "__main__":
    server.run("http", port=int(sys.argv[1]))
