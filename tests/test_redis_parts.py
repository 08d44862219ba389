"""Every Redis-backed part takes one `RedisConfig` (or, as before, a URL) and keys its data
under the configuration's prefix; `server.health()` reports the event bus."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from mcpkit import Server
from mcpkit.server.redis_backend import RedisEventBus, RedisStateStore
from mcpkit.server.redis_config import RedisConfig, until_queued
from mcpkit.server.redis_idempotency import RedisIdempotencyStore
from processes import REDIS, redis_process
from support import scaled


def test_parts_share_one_configuration() -> None:
    config = RedisConfig("redis://127.0.0.1:1/0", prefix="shop:")
    bus, state = RedisEventBus(config), RedisStateStore(config)
    records = RedisIdempotencyStore(config)
    assert bus.redis is state.redis is records.redis is config
    assert bus.channel == "shop:events" and state.prefix == "shop:state:"
    # A URL, as before: the default prefix.
    legacy = RedisEventBus("redis://10.0.0.5:6379/0")
    assert legacy.url == "redis://10.0.0.5:6379/0" and legacy.channel == "mcpkit:events"
    assert RedisStateStore("redis://10.0.0.5:6379/0").prefix == "mcpkit:state:"


def test_backoff_is_capped() -> None:
    config = RedisConfig(min_backoff=0.1, max_backoff=2.0)
    delays = [config.backoff(n) for n in range(12)]
    assert 0.05 <= delays[0] <= 0.1 and all(d <= 2.0 for d in delays) and delays[-1] >= 1.0


@pytest.mark.skipif(REDIS is None, reason="redis-server is not installed")
async def test_a_writer_sleeps_while_its_queue_is_empty() -> None:
    # The event bus's publisher and the task store's writer share this pause.
    queue: deque[bytes] = deque([b"e"])
    idle, wake = asyncio.Event(), asyncio.Event()
    await until_queued(queue, idle, wake)  # something queued: no pause, not idle
    assert not idle.is_set()
    queue.clear()
    waiting = asyncio.create_task(until_queued(queue, idle, wake))
    await asyncio.wait_for(idle.wait(), scaled(5))
    idle.clear()
    wake.set()  # a wake with nothing queued: it says idle again and sleeps on
    await asyncio.wait_for(idle.wait(), scaled(5))
    assert not waiting.done()
    queue.append(b"e")
    idle.clear()
    wake.set()
    await asyncio.wait_for(waiting, scaled(5))


async def test_single_use_state_under_the_prefix() -> None:
    async with redis_process() as redis:
        config = RedisConfig(redis.url, prefix="shop:")
        store = RedisStateStore(config)
        assert await store.consume("s1", 60) is True
        assert await store.consume("s1", 60) is False  # MRTR-11: once
        assert await config.client().exists("shop:state:s1")
        await config.close()


class LostReply:
    """A real Redis client whose first SET is applied by Redis but whose reply is lost, as
    when Redis restarts between running a command and answering it."""

    def __init__(self, client: Any) -> None:
        self.client, self.lost = client, False

    async def set(self, *args: Any, **kwargs: Any) -> Any:
        reply = await self.client.set(*args, **kwargs)
        if not self.lost:
            self.lost = True
            raise RedisConnectionError("Connection closed by server.")
        return reply


@pytest.mark.skipif(REDIS is None, reason="redis-server is not installed")
async def test_a_consumption_whose_reply_was_lost_is_still_the_first() -> None:
    async with redis_process() as redis:
        config = RedisConfig(redis.url, min_backoff=0.01)
        store = RedisStateStore(config)
        real = config.client()
        config._client = LostReply(real)
        assert await store.consume("s2", 60) is True  # its own mark found: the first use
        assert await store.consume("s2", 60) is False  # a second request: refused (MRTR-11)
        config._client = real
        await config.close()


async def test_health_of_a_single_process_server() -> None:
    health = Server("one").health()
    assert health.ready and health.bus.kind == "local" and health.bus.connected
