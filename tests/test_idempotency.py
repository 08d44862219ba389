"""Idempotency keys (`dev.mcpkit/idempotency`), in process, on both stores: a repeat of
(caller, tool, key) runs the tool once; concurrent repeats wait; other arguments are refused;
records expire; `input_required` is never kept; without the extension nothing changes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from idempotency_support import Shop, as_caller, redis_store, still_waiting
from mcpkit import Server
from mcpkit.client import Client
from mcpkit.protocol.errors import InvalidParams
from mcpkit.protocol.idempotency import IDEMPOTENCY_EXTENSION, IDEMPOTENCY_KEY
from mcpkit.server.idempotency import (
    IdempotencyStore,
    MemoryIdempotencyStore,
)
from processes import REDIS
from support import scaled


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[IdempotencyStore]:
    if request.param == "memory":
        yield MemoryIdempotencyStore(ttl_seconds=60)
        return
    if REDIS is None:
        pytest.skip("redis-server is not installed")
    async with redis_store(ttl_seconds=60) as (_, store):
        yield store


async def test_the_extension_is_advertised_with_its_ttl(store: IdempotencyStore) -> None:
    async with Shop(store).client() as client:
        assert client.supports_idempotency
        extensions = client.info.capabilities["extensions"]  # type: ignore[union-attr]
        assert extensions[IDEMPOTENCY_EXTENSION] == {"ttlSeconds": 60}


async def test_a_repeat_runs_the_tool_once(store: IdempotencyStore) -> None:
    shop = Shop(store)
    async with shop.client() as client:
        first = await client.call_tool("charge", {"amount": 5}, idempotency_key="order-1")
        again = await client.call_tool("charge", {"amount": 5}, idempotency_key="order-1")
        other = await client.call_tool("charge", {"amount": 5}, idempotency_key=True)
    assert shop.runs == 2
    assert first.text == again.text == "charged 5 (run 1)"
    assert not first.replayed and again.replayed
    assert first.idempotency_key == again.idempotency_key == "order-1"
    assert other.text == "charged 5 (run 2)" and other.idempotency_key not in (None, "order-1")


async def test_concurrent_duplicates_wait_for_the_first(store: IdempotencyStore) -> None:
    shop = Shop(store)
    async with shop.client() as client:
        first, call = await shop.held_call(client, 7)
        duplicates = [asyncio.create_task(call()) for _ in range(3)]
        await still_waiting(duplicates)
        assert shop.gate is not None
        shop.gate.set()
        results = await asyncio.gather(first, *duplicates)
    assert shop.runs == 1
    assert {r.text for r in results} == {"charged 7 (run 1)"}
    assert [r.replayed for r in results] == [False, True, True, True]


async def test_other_arguments_under_one_key_are_refused(store: IdempotencyStore) -> None:
    shop = Shop(store)
    async with shop.client() as client:
        await client.call_tool("charge", {"amount": 5}, idempotency_key="k")
        with pytest.raises(InvalidParams, match="already used with other arguments"):
            await client.call_tool("charge", {"amount": 6}, idempotency_key="k")
        # The same key on another tool is another record.
        other_tool = await client.call_tool("flaky", {"amount": 6}, idempotency_key="k")
        assert other_tool.text == "ok 6" and not other_tool.replayed
    assert shop.runs == 2


async def test_keys_are_scoped_per_principal(store: IdempotencyStore) -> None:
    shop = Shop(store)
    async with shop.client() as client:
        as_caller("alice")
        alice = await client.call_tool("charge", {"amount": 1}, idempotency_key="k")
        as_caller("bob")
        bob = await client.call_tool("charge", {"amount": 1}, idempotency_key="k")
        as_caller(None)
        anonymous = await client.call_tool("charge", {"amount": 1}, idempotency_key="k")
        as_caller("alice")
        again = await client.call_tool("charge", {"amount": 1}, idempotency_key="k")
    assert shop.runs == 3
    assert not bob.replayed and not anonymous.replayed
    assert again.replayed and again.text == alice.text


async def test_records_expire_after_the_ttl() -> None:
    clock = Clock()
    shop = Shop(MemoryIdempotencyStore(ttl_seconds=10, clock=clock))
    async with shop.client() as client:
        await client.call_tool("charge", {"amount": 1}, idempotency_key="k")
        clock.now += 9.9
        assert (await client.call_tool("charge", {"amount": 1}, idempotency_key="k")).replayed
        clock.now += 0.2
        late = await client.call_tool("charge", {"amount": 1}, idempotency_key="k")
    assert not late.replayed and shop.runs == 2


@pytest.mark.timing
@pytest.mark.skipif(REDIS is None, reason="redis-server is not installed")
async def test_redis_records_expire_after_the_ttl() -> None:
    async with redis_store(ttl_seconds=0.3) as (config, store):
        shop = Shop(store)
        async with shop.client() as client:
            await client.call_tool("charge", {"amount": 1}, idempotency_key="k")
            keys = await config.client().keys("mcpkit:idempotency:*")
            assert len(keys) == 1 and 0 < await config.client().pttl(keys[0]) <= 300
            deadline = asyncio.get_running_loop().time() + scaled(5)
            while await config.client().exists(keys[0]):  # Redis expires it: no event to await
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.05)
            late = await client.call_tool("charge", {"amount": 1}, idempotency_key="k")
        assert not late.replayed and shop.runs == 2


async def test_memory_records_are_bounded() -> None:
    store = MemoryIdempotencyStore(max_records=3)
    shop = Shop(store)
    async with shop.client() as client:
        for n in range(5):
            await client.call_tool("charge", {"amount": n}, idempotency_key=f"k{n}")
    assert len(store) == 3


async def test_input_required_is_never_the_first_result(store: IdempotencyStore) -> None:
    """MRTR: the first round answers input_required (not kept); the retry carries the key
    and runs the tool; a later repeat replays the completed result without asking again."""
    shop = Shop(store)
    async with shop.client() as client:
        first = await client.call_tool("confirm", {"amount": 3}, idempotency_key="k")
        again = await client.call_tool("confirm", {"amount": 3}, idempotency_key="k")
    assert first.text == again.text == "accept 3 (run 1)"
    assert again.replayed and shop.asked == 1 and shop.runs == 1


async def test_an_error_frees_the_key(store: IdempotencyStore) -> None:
    shop = Shop(store)
    async with shop.client() as client:
        with pytest.raises(InvalidParams, match="try again"):
            await client.call_tool("flaky", {"amount": 1}, idempotency_key="k")
        assert (await client.call_tool("flaky", {"amount": 1}, idempotency_key="k")).text == "ok 1"
    assert shop.runs == 2


async def test_absent_arguments_are_bound_as_an_empty_object() -> None:
    server = Server("bare", idempotency=MemoryIdempotencyStore())
    runs: list[int] = []

    @server.tool()
    async def ping() -> str:
        """No arguments."""
        runs.append(1)
        return "pong"

    async with Client(server) as client:
        absent = {"name": "ping", "_meta": {IDEMPOTENCY_KEY: "k"}}
        await client.request("tools/call", absent, use_cache=False)
        empty = {**absent, "arguments": {}}
        assert (await client.request("tools/call", empty, use_cache=False))["_meta"][
            "dev.mcpkit/idempotentReplay"
        ]
        with pytest.raises(InvalidParams):  # null is refused before any handler runs
            await client.request("tools/call", {**absent, "arguments": None}, use_cache=False)
    assert runs == [1]


async def test_a_malformed_key_is_refused() -> None:
    shop = Shop(MemoryIdempotencyStore())
    async with shop.client() as client:
        params = {"name": "charge", "arguments": {"amount": 1}, "_meta": {IDEMPOTENCY_KEY: 7}}
        with pytest.raises(InvalidParams, match="must be a string"):
            await client.request("tools/call", params, use_cache=False)
        with pytest.raises(ValueError, match="1 to 255"):
            await client.call_tool("charge", {"amount": 1}, idempotency_key="x" * 256)
    assert shop.runs == 0


async def test_a_server_without_the_extension_is_unchanged() -> None:
    shop = Shop(None)
    assert shop.server.idempotency is None and shop.server.idempotency_settings is None
    async with shop.client() as client:
        assert not client.supports_idempotency
        assert "extensions" not in client.info.capabilities  # type: ignore[union-attr]
        first = await client.call_tool("charge", {"amount": 1}, idempotency_key="k")
        again = await client.call_tool("charge", {"amount": 1}, idempotency_key="k")
    assert shop.runs == 2 and not first.replayed and not again.replayed
    assert first.raw == {**again.raw, "content": first.raw["content"]}


@pytest.mark.timing
@pytest.mark.skipif(REDIS is None, reason="redis-server is not installed")
async def test_a_running_call_keeps_its_redis_lease() -> None:
    async with redis_store(lease_seconds=0.3) as (config, store):
        shop = Shop(store)
        async with shop.client() as client:
            first, call = await shop.held_call(client, 1)
            (key,) = await config.client().keys("mcpkit:idempotency:*:lease")
            loop = asyncio.get_running_loop()
            start = loop.time()
            while loop.time() - start < 1.0:  # three leases: renewed all along
                assert await config.client().exists(key)
                await asyncio.sleep(0.05)
            duplicate = asyncio.create_task(call())
            await still_waiting([duplicate])
            assert shop.gate is not None
            shop.gate.set()
            assert [r.replayed for r in await asyncio.gather(first, duplicate)] == [False, True]
        assert shop.runs == 1


async def test_a_repeat_of_a_task_call_follows_the_same_task() -> None:
    """The first result of a task-augmented call is its CreateTaskResult: a repeat gets the
    same task (and its result), not a second task."""
    server = Server("jobs", idempotency=MemoryIdempotencyStore())
    started: list[int] = []

    @server.tool(task="optional")
    async def job(n: int) -> str:
        """Runs as a task."""
        started.append(n)
        return f"job {n} done"

    async with Client(server) as client:
        first = await client.call_tool("job", {"n": 1}, idempotency_key="k")
        again = await client.call_tool("job", {"n": 1}, idempotency_key="k")
    assert first.text == again.text == "job 1 done"
    assert started == [1]
