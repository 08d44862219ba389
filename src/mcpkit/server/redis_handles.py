"""`RedisHandleStore`: state handles shared by every instance of a server.

    server = Server("shop", handles=RedisHandleStore(RedisConfig(url, prefix="shop:")))

Each handle is one key, `prefix + "handle:" + id`, holding the record as JSON and expiring on
its own once the handle's lifetime and the time expired handles are remembered have passed.
Values must be JSON-serialisable (orjson: dicts, lists, str, numbers, dataclasses...).
"""

from __future__ import annotations

import math
from typing import Any

import orjson

from .handles import HandleRecord
from .redis_config import RedisConfig, as_config

__all__ = ["RedisHandleStore"]


class RedisHandleStore:
    def __init__(self, redis: RedisConfig | str | None = None) -> None:
        self.redis = as_config(redis)

    def _key(self, handle: str) -> str:
        return self.redis.key("handle", handle)

    async def put(self, handle: str, record: HandleRecord, keep_seconds: float) -> None:
        await self.redis.client().set(
            self._key(handle), _encode(record), ex=max(1, math.ceil(keep_seconds))
        )

    async def get(self, handle: str) -> HandleRecord | None:
        data = await self.redis.client().get(self._key(handle))
        return _decode(data) if data is not None else None

    async def replace(self, handle: str, record: HandleRecord) -> bool:
        # XX: only an existing key; KEEPTTL: its retention is unchanged (Redis 6+).
        done = await self.redis.client().set(
            self._key(handle), _encode(record), xx=True, keepttl=True
        )
        return bool(done)

    async def delete(self, handle: str) -> bool:
        return bool(await self.redis.client().delete(self._key(handle)))


def _encode(record: HandleRecord) -> bytes:
    return orjson.dumps(
        {"k": record.kind, "p": record.principal, "e": record.expires_at, "v": record.value}
    )


def _decode(data: Any) -> HandleRecord | None:
    try:
        raw = orjson.loads(data)
        return HandleRecord(raw["k"], raw["p"], float(raw["e"]), raw["v"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None  # not a record of ours: treated as unknown
