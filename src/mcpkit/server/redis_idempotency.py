"""Idempotency records in Redis, shared by every instance behind one endpoint.

    redis = RedisConfig("redis://10.0.0.5:6379/0", prefix="shop:")
    server = Server("shop", idempotency=RedisIdempotencyStore(redis, ttl_seconds=86400))

One key per record (`prefix + "idempotency:" + record`). A call that claims a key holds it with
a lease (`lease_seconds`, renewed while the call runs), so a key whose instance died is free
again once the lease runs out; a completed record holds the result for `ttl_seconds`. A repeat
on another instance while the first runs polls the key (capped backoff) until it completes.
Every change is a compare-and-set in one Lua script: a lost lease never overwrites another
instance's claim. Needs the `redis` package (`pip install 'mcpkit[redis]'`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from typing import Any

from .idempotency import DEFAULT_TTL, KeyReused
from .redis_config import RedisConfig, as_config, unavailable

__all__ = ["RedisIdempotencyStore"]

log = logging.getLogger("mcpkit.server")

_RUNNING, _DONE = b"R", b"D"
_DIGEST = 64  # hex sha256
# KEYS[1] the record; ARGV[1] our running value. Each runs atomically in Redis.
_RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
_RELEASE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
)
_COMPLETE = (
    "local v = redis.call('get', KEYS[1]) "
    "if v == false or v == ARGV[1] then "
    "return redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) end return 0"
)


class RedisIdempotencyStore:
    def __init__(
        self,
        redis: RedisConfig | str | None = None,
        *,
        ttl_seconds: float = DEFAULT_TTL,
        lease_seconds: float = 30.0,
        max_poll: float = 0.25,
    ) -> None:
        if ttl_seconds <= 0 or lease_seconds <= 0:
            raise ValueError("ttl_seconds and lease_seconds must be positive")
        self.redis = as_config(redis)
        self.ttl_seconds = ttl_seconds
        self.lease_seconds = lease_seconds
        self.max_poll = max_poll
        self._owned: dict[str, bytes] = {}  # record → our running value (renewed)
        self._renewer: asyncio.Task[None] | None = None
        self._scripts: dict[str, Any] = {}

    def _key(self, record: str) -> str:
        return self.redis.key("idempotency", record)

    async def _run(self, source: str, record: str, *args: bytes | int) -> None:
        """One of the Lua scripts above, on the record's key (EVALSHA, loaded on first use)."""
        client = self.redis.client()
        script = self._scripts.get(source)
        if script is None:
            script = self._scripts[source] = client.register_script(source)
        await script(keys=[self._key(record)], args=list(args), client=client)

    async def claim(self, record: str, digest: str) -> bytes | None:
        from redis.exceptions import RedisError

        key = self._key(record)
        mine = _RUNNING + digest.encode() + secrets.token_hex(8).encode()
        lease_ms = int(self.lease_seconds * 1000)
        pause = 0.005
        while True:
            try:
                client = self.redis.client()
                if await client.set(key, mine, nx=True, px=lease_ms):
                    self._owned[record] = mine
                    self._renew_soon()
                    return None
                value = await client.get(key)
            except RedisError as exc:
                raise unavailable("The idempotency store") from exc
            if value is None:
                continue  # released or expired meanwhile: claim it
            if value[1 : 1 + _DIGEST] != mine[1 : 1 + _DIGEST]:
                raise KeyReused()
            if value[:1] == _DONE:
                return bytes(value[1 + _DIGEST :])
            await asyncio.sleep(pause)  # another call runs it: wait for its result
            pause = min(pause * 2, self.max_poll)

    async def complete(self, record: str, digest: str, result: bytes) -> None:
        mine = self._owned.pop(record, b"")
        done = _DONE + digest.encode() + result
        ttl_ms = int(self.ttl_seconds * 1000)
        await self._run(_COMPLETE, record, mine, done, ttl_ms)

    async def release(self, record: str) -> None:
        mine = self._owned.pop(record, None)
        if mine is not None:
            await self._run(_RELEASE, record, mine)

    def _renew_soon(self) -> None:
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.get_running_loop().create_task(self._renew())

    async def _renew(self) -> None:
        """Keep the leases of the calls running here (renewed at a third of the lease)."""
        lease_ms = int(self.lease_seconds * 1000)
        while self._owned:
            await asyncio.sleep(self.lease_seconds / 3)
            for record, mine in list(self._owned.items()):
                try:
                    await self._run(_RENEW, record, mine, lease_ms)
                except Exception:  # Redis away: the next round tries again
                    log.debug("idempotency store: cannot renew a lease", exc_info=True)

    async def close(self) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
