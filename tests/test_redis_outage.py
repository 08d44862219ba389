"""A Redis outage under two real instances with a listener on each: `redis-server` is killed
and started again. Plain calls never fail meanwhile; the bus reconnects (capped backoff) and
changes made once Redis is back reach both listeners within the cap + 1 s."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcpkit.client import Client
from processes import REDIS, http_server, redis_process
from support import ROOT, scaled

pytestmark = [
    pytest.mark.timing,
    pytest.mark.skipif(REDIS is None, reason="redis-server is not installed"),
]

BUS = ROOT / "tests/servers/bus_server.py"
MAX_BACKOFF = 1.0  # RedisConfig.max_backoff of both instances


class Listener:
    """A `subscriptions/listen` stream on one instance, collecting updated URIs."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.heard: set[str] = set()
        self.news = asyncio.Condition()
        self.ready = asyncio.Event()
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async with self.client.subscribe(resource_uris=["bus://changes"]) as sub:
            self.ready.set()
            async for note in sub:
                async with self.news:
                    self.heard.add((note.params or {}).get("uri", ""))
                    self.news.notify_all()

    async def hears(self, name: str, deadline: float) -> None:
        """`bus://changes/<name>` has arrived by `deadline` (loop time), in any order."""
        remaining = max(0.0, deadline - asyncio.get_running_loop().time())
        async with self.news:
            await asyncio.wait_for(
                self.news.wait_for(lambda: f"bus://changes/{name}" in self.heard), remaining
            )


async def bus(client: Client) -> dict[str, Any]:
    return (await client.call_tool("health")).structured_content  # type: ignore[no-any-return]


async def until(check: Callable[[], Any], seconds: float = 10) -> None:
    """Poll another process's state (no event crosses the process boundary)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + scaled(seconds)
    while not await check():
        assert loop.time() < deadline, "condition not reached"
        await asyncio.sleep(0.05)


async def test_the_bus_heals_after_a_redis_restart(tmp_path: Path) -> None:
    log = tmp_path / "servers.log"
    backoff = str(MAX_BACKOFF)
    async with redis_process() as redis:
        url = redis.url
        async with (
            http_server(BUS, url, backoff, log=log) as a,
            http_server(BUS, url, backoff, log=log) as b,
            Client(a + "/mcp") as ca,
            Client(b + "/mcp") as cb,
        ):
            await outage(redis, ca, cb)
    text = log.read_text()  # both servers have exited
    assert "Task exception was never retrieved" not in text
    assert "Traceback" not in text
    assert text.count("connected again") == 2  # each instance logs the outage and the heal


async def outage(redis: Any, ca: Client, cb: Client) -> None:
    on_a, on_b = Listener(ca), Listener(cb)
    await asyncio.wait_for(asyncio.gather(on_a.ready.wait(), on_b.ready.wait()), scaled(10))
    loop = asyncio.get_running_loop()
    await ca.call_tool("change", {"name": "before"})
    await on_b.hears("before", loop.time() + 5)
    assert (await bus(ca))["connected"] and (await bus(cb))["connected"]

    await redis.kill()

    async def both_down() -> bool:
        return not (await bus(ca))["connected"] and not (await bus(cb))["connected"]

    await until(both_down)
    down = await bus(ca)
    assert "ConnectionError" in down["error"]
    for n in range(10):  # plain calls (and changes) keep working during the outage
        assert (await ca.call_tool("echo", {"text": f"a{n}"})).text == f"a{n}"
        assert (await cb.call_tool("echo", {"text": f"b{n}"})).text == f"b{n}"
    await ca.call_tool("change", {"name": "during"})  # waits in A's outbox
    await on_a.hears("during", loop.time() + scaled(1))  # A's own listener hears it at once
    assert (await bus(ca))["pending"] == 1

    await redis.start()  # the same port; returns once it accepts connections
    back = loop.time()
    await ca.call_tool("change", {"name": "after-a"})
    await cb.call_tool("change", {"name": "after-b"})
    deadline = back + MAX_BACKOFF + scaled(1)
    await on_b.hears("after-a", deadline)
    await on_a.hears("after-b", deadline)
    await on_b.hears("during", deadline)  # kept while Redis was away, published once back

    healed = await bus(ca)
    assert healed["connected"] and healed["since"] > down["since"]
    assert healed["pending"] == 0 and healed["dropped"] == 0
    assert healed["published"] >= 3 and healed["delivered"] >= 1
    for listener in (on_a, on_b):
        listener.task.cancel()
    await asyncio.gather(on_a.task, on_b.task, return_exceptions=True)


async def test_an_instance_starts_while_redis_is_down(tmp_path: Path) -> None:
    """The server serves at once and subscribes when Redis appears."""
    log = tmp_path / "server.log"
    async with redis_process() as redis:
        await redis.kill()
        url = redis.url
        async with (
            http_server(BUS, url, str(MAX_BACKOFF), log=log) as base,
            Client(base + "/mcp") as client,
        ):
            assert (await client.call_tool("echo", {"text": "up"})).text == "up"
            assert not (await bus(client))["connected"]
            await redis.start()
            back = asyncio.get_running_loop().time()

            async def connected() -> bool:
                return bool((await bus(client))["connected"])

            await until(connected)
            assert asyncio.get_running_loop().time() - back < MAX_BACKOFF + scaled(1)
    assert "never retrieved" not in log.read_text()
