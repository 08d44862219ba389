"""Idempotency keys at most once, in process, on both stores: a keyed call outlives its request
and its result answers the re-send; a call stopped midway (explicit cancel, the server stopping,
an instance whose lease lapsed) leaves "outcome unknown" under its key, never a free key; keyed
calls running at once are capped."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from idempotency_support import Shop, as_caller, redis_store, still_waiting
from mcpkit import Server
from mcpkit.protocol.errors import SERVER_BUSY, MCPError, ServerBusy
from mcpkit.server.admission import CANCEL_REQUESTED
from mcpkit.server.idempotency import (
    OUTCOME_UNKNOWN,
    IdempotencyStore,
    MemoryIdempotencyStore,
    argument_digest,
    record_id,
)
from mcpkit.server.redis_idempotency import RedisIdempotencyStore
from processes import REDIS


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[IdempotencyStore]:
    if request.param == "memory":
        yield MemoryIdempotencyStore(ttl_seconds=60)
        return
    if REDIS is None:
        pytest.skip("redis-server is not installed")
    async with redis_store(ttl_seconds=60) as (_, store):
        yield store


@pytest.mark.skipif(REDIS is None, reason="redis-server is not installed")
async def test_a_claim_whose_instance_died_is_outcome_unknown_after_its_lease() -> None:
    """Its instance is gone and nobody renews its lease: the call may have had its effect, so
    the key is never free again within the TTL (a repeat learns the outcome is unknown)."""
    async with redis_store() as (config, store):
        shop = Shop(store)
        record = config.key("idempotency", record_id(None, "charge", "k"))
        digest = argument_digest({"amount": 1}).encode()
        await config.client().set(record, b"R" + digest + b"gone", px=60_000)
        await config.client().set(record + ":lease", b"R" + digest + b"gone", px=300)
        async with shop.client() as client:
            with pytest.raises(MCPError, match=r"Outcome unknown.*'k'") as raised:
                await client.call_tool("charge", {"amount": 1}, idempotency_key="k")
            assert raised.value.code == OUTCOME_UNKNOWN
            assert raised.value.data == {"idempotencyKey": "k"}
            with pytest.raises(MCPError, match="Outcome unknown"):  # and stays so
                await client.call_tool("charge", {"amount": 1}, idempotency_key="k")
        assert shop.runs == 0


async def test_a_call_whose_request_went_away_runs_to_its_outcome(store: IdempotencyStore) -> None:
    """A disconnect cancels the request (TR-HTTP-23), not the keyed call: it runs on detached
    (CANC-11) and its result answers the re-send, so the tool runs once."""
    shop = Shop(store)
    async with shop.client() as client:
        first, call = await shop.held_call(client, 1)
        first.cancel()  # the request is gone, as when its connection closes
        with pytest.raises(asyncio.CancelledError):
            await first
        again = asyncio.create_task(call())
        await still_waiting([again])
        assert shop.gate is not None
        shop.gate.set()
        result = await again
    assert result.text == "charged 1 (run 1)" and result.replayed
    assert shop.runs == 1


async def test_an_explicit_cancel_leaves_the_outcome_unknown(store: IdempotencyStore) -> None:
    """`notifications/cancelled` (stdio, 2025-11-25) stops the call midway: it may have had its
    effect, so the key answers "outcome unknown", never runs the tool again."""
    shop = Shop(store)
    async with shop.client() as client:
        first, call = await shop.held_call(client, 1)
        first.cancel(CANCEL_REQUESTED)  # how the transports cancel on the client's word
        with pytest.raises(asyncio.CancelledError):
            await first
        with pytest.raises(MCPError, match="Outcome unknown") as raised:
            await call()
    assert raised.value.code == OUTCOME_UNKNOWN and raised.value.data == {"idempotencyKey": "k"}
    assert shop.runs == 1


async def test_a_call_stopped_with_the_server_leaves_the_outcome_unknown(
    store: IdempotencyStore,
) -> None:
    """Serving ends (a drain past its grace): the calls still running stop, each leaving
    "outcome unknown" under its key."""
    shop = Shop(store)
    async with shop.client() as client:
        first, call = await shop.held_call(client, 1)
        await shop.server.stop_detached()
        with pytest.raises(MCPError, match="Outcome unknown"):  # the waiting request too
            await first
        with pytest.raises(MCPError, match="Outcome unknown"):
            await call()
    assert shop.runs == 1


async def test_keyed_calls_running_at_once_are_capped() -> None:
    """Past `max_running_per_caller` (or `max_running` in all) a new keyed call is refused
    with a capacity error before it runs; a replay is no new call and is never refused."""
    shop = Shop(MemoryIdempotencyStore(max_running=2, max_running_per_caller=1))
    async with shop.client() as client:
        as_caller("alice")
        first, _ = await shop.held_call(client, 1)
        with pytest.raises(ServerBusy, match="Too many keyed tool calls of yours") as mine:
            await client.call_tool("charge", {"amount": 2}, idempotency_key="k2")
        assert mine.value.code == SERVER_BUSY and mine.value.data["retryAfter"] == 1
        as_caller("bob")
        shop.entered.clear()
        second = asyncio.create_task(
            client.call_tool("charge", {"amount": 3}, idempotency_key="k3")
        )
        await shop.entered.wait()  # bob's call is inside the tool
        as_caller("carol")
        with pytest.raises(ServerBusy, match=r"Too many keyed tool calls running .*\(2\)"):
            await client.call_tool("charge", {"amount": 4}, idempotency_key="k4")
        assert shop.gate is not None
        shop.gate.set()
        await asyncio.gather(first, second)
        as_caller("alice")
        again = await client.call_tool("charge", {"amount": 2}, idempotency_key="k2")
    assert not again.replayed  # the refused call left its key free


def test_use_redis_keeps_the_caps() -> None:
    server = Server(
        "shop",
        idempotency=MemoryIdempotencyStore(ttl_seconds=60, max_running=3, max_running_per_caller=2),
    )
    server.use_redis("redis://127.0.0.1:1/0")  # nothing connects before serving
    assert isinstance(server.idempotency, RedisIdempotencyStore)
    assert server.detached is not None
    assert (server.detached.max_running, server.detached.max_running_per_caller) == (3, 2)
    assert server.idempotency.ttl_seconds == 60
