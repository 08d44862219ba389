"""Idempotency records in Redis, shared by every instance behind one endpoint.

    redis = RedisConfig("redis://10.0.0.5:6379/0", prefix="shop:")
    server = Server("shop", idempotency=RedisIdempotencyStore(redis, ttl_seconds=86400))

One key per record (`prefix + "idempotency:" + record`) and, while its call runs, a lease
beside it (`...:lease`, `lease_seconds`, renewed while the call runs). A record is running
(`R`), done (`D`, the result) or unknown (`U`: the call was stopped, or its instance died and
its lease lapsed: the first repeat to find a running record without its lease marks it so), for
`ttl_seconds` after it ended. A repeat on another instance while the first runs polls the
record (capped backoff) until it ends. Every change is a compare-and-set in one Lua script: a
lost lease never overwrites another instance's claim, and a lapsed call's key is never free
again within the TTL. Needs the `redis` package (`pip install 'mcpkit[redis]'`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from typing import Any

from .idempotency import (
    DEFAULT_MAX_RUNNING,
    DEFAULT_MAX_RUNNING_PER_CALLER,
    DEFAULT_TTL,
    KeyReused,
    OutcomeUnknown,
)
from .redis_config import RedisConfig, as_config, unavailable

__all__ = ["RedisIdempotencyStore"]

log = logging.getLogger("mcpkit.server")

_RUNNING, _DONE, _UNKNOWN = b"R", b"D", b"U"
_DIGEST = 64  # hex sha256
# KEYS[1] the record, KEYS[2] its lease; ARGV[1] our running value. Each runs atomically.
# Claim: take a free record (with a lease), or mark a running one whose lease lapsed unknown;
# the record as it now is.
_CLAIM = (
    "local v = redis.call('get', KEYS[1]) "
    "if v == false then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) "
    "redis.call('set', KEYS[2], ARGV[1], 'PX', ARGV[3]) return ARGV[1] end "
    "if string.sub(v, 1, 1) == 'R' and redis.call('exists', KEYS[2]) == 0 then "
    "v = 'U' .. string.sub(v, 2, 65) redis.call('set', KEYS[1], v, 'PX', ARGV[2]) end "
    "return v"
)
_RENEW = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('pexpire', KEYS[1], ARGV[3]) "
    "return redis.call('set', KEYS[2], ARGV[1], 'PX', ARGV[2]) end return 0"
)
_RELEASE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1], KEYS[2]) "
    "end return 0"
)
# Complete or abandon: ARGV[2] the ended record. A record marked unknown stays so.
_END = (
    "local v = redis.call('get', KEYS[1]) "
    "if v == false or v == ARGV[1] then redis.call('del', KEYS[2]) "
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
        max_running: int = DEFAULT_MAX_RUNNING,
        max_running_per_caller: int = DEFAULT_MAX_RUNNING_PER_CALLER,
    ) -> None:
        if ttl_seconds <= 0 or lease_seconds <= 0:
            raise ValueError("ttl_seconds and lease_seconds must be positive")
        self.redis = as_config(redis)
        self.ttl_seconds = ttl_seconds
        self.max_running = max_running
        self.max_running_per_caller = max_running_per_caller
        self.lease_seconds = lease_seconds
        self.max_poll = max_poll
        self._owned: dict[str, bytes] = {}  # record → our running value (renewed)
        self._renewer: asyncio.Task[None] | None = None
        self._scripts: dict[str, Any] = {}

    def _key(self, record: str) -> str:
        return self.redis.key("idempotency", record)

    async def _run(self, source: str, record: str, *args: bytes | int) -> Any:
        """One of the Lua scripts above, on the record's keys (EVALSHA, loaded on first use)."""
        client = self.redis.client()
        script = self._scripts.get(source)
        if script is None:
            script = self._scripts[source] = client.register_script(source)
        key = self._key(record)
        return await script(keys=[key, key + ":lease"], args=list(args), client=client)

    async def claim(self, record: str, digest: str) -> bytes | None:
        from redis.exceptions import RedisError

        mine = _RUNNING + digest.encode() + secrets.token_hex(8).encode()
        ttl_ms, lease_ms = int(self.ttl_seconds * 1000), int(self.lease_seconds * 1000)
        pause = 0.005
        while True:
            try:
                value = await self._run(_CLAIM, record, mine, ttl_ms, lease_ms)
            except RedisError as exc:
                raise unavailable("The idempotency store") from exc
            if value == mine:
                self._owned[record] = mine
                self._renew_soon()
                return None
            if value[1 : 1 + _DIGEST] != mine[1 : 1 + _DIGEST]:
                raise KeyReused()
            if value[:1] == _DONE:
                return bytes(value[1 + _DIGEST :])
            if value[:1] == _UNKNOWN:
                raise OutcomeUnknown()
            await asyncio.sleep(pause)  # another call runs it: wait for its outcome
            pause = min(pause * 2, self.max_poll)

    async def complete(self, record: str, digest: str, result: bytes) -> None:
        await self._end(record, _DONE + digest.encode() + result)

    async def abandon(self, record: str, digest: str) -> None:
        await self._end(record, _UNKNOWN + digest.encode())

    async def _end(self, record: str, ended: bytes) -> None:
        mine = self._owned.pop(record, b"")
        await self._run(_END, record, mine, ended, int(self.ttl_seconds * 1000))

    async def release(self, record: str) -> None:
        mine = self._owned.pop(record, None)
        if mine is not None:
            await self._run(_RELEASE, record, mine)

    def _renew_soon(self) -> None:
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.get_running_loop().create_task(self._renew())

    async def _renew(self) -> None:
        """Keep the leases of the calls running here (renewed at a third of the lease)."""
        lease_ms, ttl_ms = int(self.lease_seconds * 1000), int(self.ttl_seconds * 1000)
        while self._owned:
            await asyncio.sleep(self.lease_seconds / 3)
            for record, mine in list(self._owned.items()):
                try:
                    await self._run(_RENEW, record, mine, lease_ms, ttl_ms)
                except Exception:  # Redis away: the next round tries again
                    log.debug("idempotency store: cannot renew a lease", exc_info=True)

    async def close(self) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
