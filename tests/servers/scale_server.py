"""One instance of a scaled-out deployment: every shared part in Redis (event bus, tasks,
single-use requestState, handles, idempotency records), shared requestState keys
(MCPKIT_STATE_KEYS), its own 2025-11-25 session id prefix.
`python scale_server.py PORT REDIS_URL NAME`.

Environment: SCALE_LEASE (task lease seconds, default 2), MCPKIT_DRAIN_TIMEOUT."""

from __future__ import annotations

import asyncio
import os
import sys

from mcpkit import Context, Server
from mcpkit.server.idempotency import MemoryIdempotencyStore
from mcpkit.server.redis_config import RedisConfig
from mcpkit.server.request_state import MemoryStateStore
from mcpkit.server.tasks.redis_store import RedisTaskStore

PORT, URL, NAME = int(sys.argv[1]), sys.argv[2], sys.argv[3]
redis = RedisConfig(URL, prefix="scale:", socket_timeout=2.0, max_backoff=0.5)
server = Server(
    "scale",
    tasks=RedisTaskStore(
        redis, lease_seconds=float(os.environ.get("SCALE_LEASE", "2")), poll_interval_ms=100
    ),
    single_use_state=MemoryStateStore(),
    idempotency=MemoryIdempotencyStore(),
)
server.use_redis(redis)  # the rest: event bus, single-use state, handles, idempotency records
NAMED = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@server.resource("scale://changes")
async def changes() -> str:
    return "changes"


@server.tool()
def echo(text: str) -> str:
    """A plain call."""
    return f"{text} from {NAME}"


@server.tool()
async def slow(seconds: float) -> str:
    """Answers after `seconds`."""
    await asyncio.sleep(seconds)
    return f"slept on {NAME}"


@server.tool()
async def greet(ctx: Context) -> str:
    """Asks a name (MRTR); answers where the retry lands."""
    answer = await ctx.elicit("Your name?", NAMED, key="name")
    return f"Hello, {answer.content['name']}! ({NAME})"


@server.tool()
def change(n: int) -> str:
    """Publishes change number n (a resource update under scale://changes)."""
    server.notify_resource_updated(f"scale://changes/{n}")
    return "published"


@server.tool(task="optional")
async def job(seconds: float = 0.2) -> str:
    """A task that works for `seconds`."""
    await asyncio.sleep(seconds)
    return f"job done on {NAME}"


@server.tool(task="optional")
async def ask_job(ctx: Context) -> str:
    """A task that asks a question through tasks/update."""
    answer = await ctx.elicit("Your name?", NAMED, key="name")
    return f"asked {answer.content['name']} on {NAME}"


@server.tool()
def state() -> dict[str, object]:
    """This instance: its name, whether it drains, its open listen streams."""
    return {"name": NAME, "draining": server.draining, "streams": len(server.subscriptions)}


if __name__ == "__main__":
    server.run("http", port=PORT, session_id_prefix=f"{NAME}.")
