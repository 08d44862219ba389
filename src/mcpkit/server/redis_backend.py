"""Redis for several server instances: a pub/sub `EventBus` and a single-use `StateStore`.

    server = Server("shop", event_bus=RedisEventBus("redis://10.0.0.5:6379/0"),
                    state_keys=[KEY], single_use_state=RedisStateStore(url))

Needs the `redis` package (`pip install mcpkit[redis]`).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import orjson

from .events import Deliver
from .redis_config import unavailable, unreachable

log = logging.getLogger("mcpkit.server")


def _client(url: str) -> Any:
    try:
        import redis.asyncio as aioredis
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "RedisEventBus needs the redis package: pip install 'mcpkit[redis]'"
        ) from exc
    return aioredis.from_url(url)


class RedisEventBus:
    """Change events shared by every instance subscribed to one channel."""

    def __init__(
        self, url: str = "redis://127.0.0.1:6379/0", channel: str = "mcpkit:events"
    ) -> None:
        self.url = url
        self.channel = channel
        self.instance = uuid.uuid4().hex
        self._client: Any = None
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._pending: set[asyncio.Task[Any]] = set()

    async def start(self, deliver: Deliver) -> None:
        if self._reader is not None:
            return
        self._client = _client(self.url)
        self._pubsub = self._client.pubsub()
        await self._pubsub.subscribe(self.channel)
        self._reader = asyncio.get_running_loop().create_task(self._read(deliver))

    async def _read(self, deliver: Deliver) -> None:
        while True:
            try:
                async for message in self._pubsub.listen():
                    if message.get("type") != "message":
                        continue
                    try:
                        event = orjson.loads(message["data"])
                    except orjson.JSONDecodeError:
                        continue
                    if event.get("i") != self.instance and isinstance(event.get("m"), str):
                        deliver(event["m"], event.get("p"), event.get("u"))
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("redis event bus: connection lost; resubscribing")
                await asyncio.sleep(1)
                await self._pubsub.subscribe(self.channel)

    def publish(self, method: str, params: dict[str, Any] | None, uri: str | None) -> None:
        if self._client is None:
            return
        data = orjson.dumps({"i": self.instance, "m": method, "p": params, "u": uri})
        task = asyncio.get_running_loop().create_task(self._client.publish(self.channel, data))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def close(self) -> None:
        if self._pending:
            await asyncio.wait(self._pending, timeout=2)
        if self._reader is not None:
            self._reader.cancel()
            self._reader = None
        if self._pubsub is not None:
            await self._pubsub.aclose()
        if self._client is not None:
            await self._client.aclose()
            self._client = None


class RedisStateStore:
    """Single-use requestState across instances (MRTR-11): SET NX with an expiry."""

    def __init__(
        self, url: str = "redis://127.0.0.1:6379/0", prefix: str = "mcpkit:state:"
    ) -> None:
        self.url = url
        self.prefix = prefix
        self._client: Any = None

    async def consume(self, state_id: str, ttl_seconds: float) -> bool:
        if self._client is None:
            self._client = _client(self.url)
        try:
            ok = await self._client.set(
                self.prefix + state_id, b"1", nx=True, ex=max(1, int(ttl_seconds))
            )
        except unreachable():
            raise unavailable("The single-use state store") from None
        return bool(ok)
