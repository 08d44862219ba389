"""One instance sharing changes through Redis, with a quick backoff cap for outage tests:
`python bus_server.py PORT REDIS_URL MAX_BACKOFF` (HTTP). REDIS_URL `-`: no Redis (one process)."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

from mcpkit import Server
from mcpkit.server.redis_backend import RedisEventBus
from mcpkit.server.redis_config import RedisConfig

redis = RedisConfig(sys.argv[2], max_backoff=float(sys.argv[3]), min_backoff=0.05)
server = Server("bus", event_bus=RedisEventBus(redis) if sys.argv[2] != "-" else None)


@server.resource("bus://changes")
async def changes() -> str:
    return "the changes"


@server.tool()
async def change(name: str) -> str:
    """Announces an update of bus://changes/<name> (to every instance, through the bus)."""
    server.notify_resource_updated(f"bus://changes/{name}")
    return name


@server.tool()
async def echo(text: str) -> str:
    """A plain call: it must work whatever Redis does."""
    return text


@server.tool()
async def health() -> dict[str, Any]:
    """server.health().bus"""
    return dataclasses.asdict(server.health().bus)


if __name__ == "__main__":
    server.run("http", port=int(sys.argv[1]))
