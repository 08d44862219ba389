"""What the in-process idempotency tests share: a real Redis store, and a server whose tools
count their runs (one held inside the tool until the test lets it go)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from mcpkit import Context, Server
from mcpkit.auth import AccessToken
from mcpkit.client import Client
from mcpkit.client.inputs import Elicitation
from mcpkit.protocol.errors import InvalidParams
from mcpkit.server.auth.access import current_access
from mcpkit.server.idempotency import IdempotencyStore
from mcpkit.server.redis_config import RedisConfig
from mcpkit.server.redis_idempotency import RedisIdempotencyStore
from processes import redis_process


@contextlib.asynccontextmanager
async def redis_store(**options: Any) -> AsyncIterator[tuple[RedisConfig, RedisIdempotencyStore]]:
    """A real redis-server and a store on it; both closed after."""
    async with redis_process() as redis:
        config = RedisConfig(redis.url)
        store = RedisIdempotencyStore(config, **options)
        try:
            yield config, store
        finally:
            await store.close()
            await config.close()


class Shop:
    """A server whose tools count their runs."""

    def __init__(self, store: IdempotencyStore | None) -> None:
        self.server = server = Server("shop", idempotency=store)
        self.runs = 0
        self.gate: asyncio.Event | None = None
        self.entered = asyncio.Event()
        self.asked = 0

        @server.tool()
        async def charge(amount: int) -> str:
            """Not idempotent by itself."""
            self.runs += 1
            self.entered.set()
            if self.gate is not None:
                await self.gate.wait()
            return f"charged {amount} (run {self.runs})"

        @server.tool()
        async def flaky(amount: int) -> str:
            """Fails with a JSON-RPC error on its first run."""
            self.runs += 1
            if self.runs == 1:
                raise InvalidParams("try again")
            return f"ok {amount}"

        @server.tool()
        async def confirm(ctx: Context, amount: int) -> str:
            """Asks first (MRTR), then acts."""
            answer = await ctx.elicit(
                "Sure?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
            )
            self.runs += 1
            return f"{answer.action} {amount} (run {self.runs})"

    async def elicit(self, request: Elicitation) -> dict[str, Any]:
        self.asked += 1
        return {"action": "accept", "content": {"ok": True}}

    def client(self) -> Client:
        return Client(self.server, elicitation=self.elicit)

    async def held_call(self, client: Client, amount: int) -> tuple[Any, Callable[[], Any]]:
        """A keyed `charge` that is inside the tool, held there until `gate` is set; and a
        way to send it again."""

        def call() -> Any:
            return client.call_tool("charge", {"amount": amount}, idempotency_key="k")

        self.gate = asyncio.Event()
        first = asyncio.create_task(call())
        await self.entered.wait()
        return first, call


async def still_waiting(tasks: list[Any]) -> None:
    done, _ = await asyncio.wait(tasks, timeout=0.2)
    assert not done  # they wait for the first call; none of them runs the tool


def as_caller(name: str | None) -> None:
    """In process the request runs in the caller's context: set its verified principal (the
    test runs in a task of its own, so this ends with the test)."""
    current_access.set(AccessToken(name) if name is not None else None)
