"""State handles: opaque, bound to the principal, with a lifetime; in memory and in Redis."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from mcpkit import Server
from mcpkit.server import HandleError, MemoryHandleStore
from mcpkit.server.auth.access import AccessToken, current_access
from mcpkit.server.redis_config import RedisConfig
from mcpkit.server.redis_handles import RedisHandleStore
from support import ask, redis_server, text_of


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def basket_server(store: Any = None, clock: Callable[[], float] | None = None) -> Server:
    server = Server("shop", handles=store)
    if clock is not None:
        server.handles.clock = clock
    baskets = server.handles.kind("basket", ttl=600, start_over="call open_basket again")

    @server.tool()
    async def open_basket() -> str:
        """Open an empty basket; returns its basket_id."""
        return await baskets.create({"items": []})

    @server.tool()
    async def add_item(basket_id: str, sku: str) -> dict[str, Any]:
        """Add an item to a basket."""
        basket = await baskets.resolve(basket_id)
        basket["items"].append(sku)
        await baskets.update(basket_id, basket)
        return basket

    @server.tool()
    async def checkout(basket_id: str) -> str:
        """Buy what is in the basket."""
        basket = await baskets.discard(basket_id)
        return f"bought {len(basket['items'])}"

    return server


async def as_principal(server: Server, who: str | None, name: str, **args: Any) -> Any:
    reset = current_access.set(AccessToken(subject=who) if who is not None else None)
    try:
        return await ask(server, "tools/call", {"name": name, "arguments": args})
    finally:
        current_access.reset(reset)


async def scenario(server: Server, clock: Clock) -> None:
    opened = await as_principal(server, "ann", "open_basket")
    handle = text_of(opened)
    assert re.fullmatch(r"basket_[A-Za-z0-9_-]{24}", handle)
    other = text_of(await as_principal(server, "ann", "open_basket"))
    assert other != handle  # unguessable: fresh randomness each time

    added = await as_principal(server, "ann", "add_item", basket_id=handle, sku="KET-BLUE")
    assert added["structuredContent"] == {"items": ["KET-BLUE"]}
    added = await as_principal(server, "ann", "add_item", basket_id=handle, sku="MUG-SET")
    assert added["structuredContent"] == {"items": ["KET-BLUE", "MUG-SET"]}

    # Another principal (and an anonymous caller) cannot use it, nor learn that it exists.
    foreign = await as_principal(server, "bob", "add_item", basket_id=handle, sku="X")
    unknown = await as_principal(server, "bob", "add_item", basket_id="basket_" + "A" * 24, sku="X")
    anonymous = await as_principal(server, None, "add_item", basket_id=handle, sku="X")
    assert foreign["isError"] is True and anonymous["isError"] is True
    assert text_of(foreign) == text_of(anonymous) == text_of(unknown).replace("A" * 24, handle[7:])
    assert "Unknown basket handle" in text_of(foreign)
    assert "or call open_basket again" in text_of(foreign)
    garbage = await as_principal(server, "ann", "add_item", basket_id="R-501", sku="X")
    assert "Unknown basket handle 'R-501'" in text_of(garbage)

    # Expired: the model is told to start over.
    clock.now += 601
    expired = await as_principal(server, "ann", "add_item", basket_id=handle, sku="X")
    assert expired["isError"] is True
    assert text_of(expired) == (
        f"The basket handle {handle!r} expired 1 s ago (it lasts 10 min). "
        "Start over: call open_basket again."
    )

    # Discarded: later use is unknown.
    clock.now -= 601
    assert text_of(await as_principal(server, "ann", "checkout", basket_id=handle)) == "bought 2"
    again = await as_principal(server, "ann", "checkout", basket_id=handle)
    assert "Unknown basket handle" in text_of(again)


async def test_handles_in_memory() -> None:
    clock = Clock()
    await scenario(basket_server(MemoryHandleStore(clock=clock), clock), clock)


@pytest.fixture
async def redis_url() -> AsyncIterator[str]:
    async with redis_server() as url:
        yield url


async def test_handles_in_redis_are_shared_by_instances(redis_url: str) -> None:
    clock = Clock()
    config = RedisConfig(redis_url, prefix="t1:")
    one = basket_server(RedisHandleStore(config), clock)
    two = basket_server(RedisHandleStore(redis_url), clock)  # a URL works too (default prefix)
    try:
        await scenario(one, clock)
        handle = text_of(await as_principal(one, "ann", "open_basket"))
        await as_principal(one, "ann", "add_item", basket_id=handle, sku="A")
        shared = basket_server(RedisHandleStore(RedisConfig(redis_url, prefix="t1:")), clock)
        added = await as_principal(shared, "ann", "add_item", basket_id=handle, sku="B")
        assert added["structuredContent"] == {"items": ["A", "B"]}  # another instance
        elsewhere = await as_principal(two, "ann", "add_item", basket_id=handle, sku="C")
        assert "Unknown basket handle" in text_of(elsewhere)  # another prefix, another shop
        # The record expires in Redis by itself: lifetime + the time expired ones are kept.
        ttl = await config.client().ttl(config.key("handle", handle))
        assert 600 < ttl <= 600 + 3600
    finally:
        await config.close()
        assert isinstance(two.handles.store, RedisHandleStore)
        await two.handles.store.redis.close()


async def test_the_memory_store_is_bounded_and_forgets_old_records() -> None:
    clock = Clock()
    server = Server("s", handles=MemoryHandleStore(max_handles=3, clock=clock))
    server.handles.clock = clock
    kind = server.handles.kind("note", ttl=10)
    first = await kind.create(1)
    for n in range(3):
        await kind.create(n)
    store = server.handles.store
    assert isinstance(store, MemoryHandleStore) and len(store) == 3
    with pytest.raises(HandleError, match="Unknown note handle"):
        await kind.resolve(first)  # the oldest made room
    clock.now += 10 + 3600 + 1  # past the lifetime and the memory of expiry
    await kind.create(9)
    assert len(store) == 1


def test_kinds_are_checked() -> None:
    handles = Server("s").handles
    handles.kind("basket")
    with pytest.raises(ValueError, match="already exists"):
        handles.kind("basket")
    with pytest.raises(ValueError, match="use 1-32 of a-z 0-9 _"):
        handles.kind("Basket-1")
    with pytest.raises(ValueError, match="ttl must be"):
        handles.kind("cart", ttl=0)
