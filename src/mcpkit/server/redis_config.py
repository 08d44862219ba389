"""One Redis configuration for every Redis-backed part of a server (event bus, single-use
requestState, idempotency records, state handles, tasks): one URL, one key prefix, one client.

    redis = RedisConfig("redis://127.0.0.1:6379/0", prefix="shop:")
    server = Server("shop", event_bus=RedisEventBus(redis), single_use_state=RedisStateStore(redis))

Needs the `redis` package (`pip install 'mcpkit[redis]'`); it is imported on first use.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sized
from dataclasses import dataclass, field
from typing import Any

from ..protocol.errors import StoreUnavailable

DEFAULT_URL = "redis://127.0.0.1:6379/0"


@dataclass(slots=True)
class RedisConfig:
    """Where the shared state lives. Every part keys its data as `prefix + part + ":" + id`,
    so several deployments can share one Redis with different prefixes."""

    url: str = DEFAULT_URL
    prefix: str = "mcpkit:"
    #: Seconds to wait for a connection and for each command before it counts as an outage.
    socket_timeout: float = 5.0
    #: The largest pause between reconnection attempts (capped exponential backoff): after an
    #: outage, the event bus is subscribed and publishing again at most this long after Redis
    #: accepts connections.
    max_backoff: float = 5.0
    #: The first pause of that backoff (then doubled up to `max_backoff`).
    min_backoff: float = 0.1
    #: How often an idle subscription checks its connection (PING), to notice a silent outage.
    health_interval: float = 5.0
    #: Extra attempts of a failed command (with a short backoff) before the caller sees it.
    retries: int = 2
    _client: Any = field(default=None, init=False, repr=False, compare=False)

    def key(self, part: str, ident: str = "") -> str:
        """The Redis key (or channel) of one part's record: `prefix` + `part` + `:` + `ident`."""
        return f"{self.prefix}{part}:{ident}" if ident else f"{self.prefix}{part}"

    def client(self) -> Any:
        """The shared `redis.asyncio.Redis` client of this configuration (made on first use)."""
        if self._client is None:
            self._client = self.new_client()
        return self._client

    def new_client(self, *, retries: int | None = None) -> Any:
        """A client of its own (pub/sub readers hold a connection for themselves). `retries`:
        attempts after a failed command (default `self.retries`; 0 for callers that run their
        own backoff, such as the event bus)."""
        try:
            import redis.asyncio as aioredis
            from redis.asyncio.retry import Retry
            from redis.backoff import ExponentialBackoff
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "Redis-backed state needs the redis package: pip install 'mcpkit[redis]'"
            ) from exc
        backoff = ExponentialBackoff(cap=self.max_backoff, base=self.min_backoff)
        return aioredis.from_url(
            self.url,
            socket_timeout=self.socket_timeout,
            socket_connect_timeout=self.socket_timeout,
            health_check_interval=self.health_interval,
            retry=Retry(backoff, self.retries if retries is None else retries),
        )

    def backoff(self, attempt: int) -> float:
        """The pause before reconnection attempt `attempt` (0, 1, ...): doubling from
        `min_backoff`, never above `max_backoff`, with jitter so instances spread out."""
        delay = min(self.max_backoff, self.min_backoff * 2 ** min(attempt, 32))
        return float(delay * random.uniform(0.5, 1.0))

    async def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()


async def until_queued(queue: Sized, idle: asyncio.Event, wake: asyncio.Event) -> None:
    """The pause of a task that writes a queue to Redis in order (the event bus's outbox, the
    task store's changed tasks): while the queue is empty, say so on `idle` and sleep until
    `wake` is set."""
    while not queue:
        idle.set()
        wake.clear()
        await wake.wait()


def unreachable() -> tuple[type[BaseException], ...]:
    """What "Redis cannot be reached" raises (a restarted Redis still loading its AOF
    answers LOADING, a ConnectionError)."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    return (RedisConnectionError, RedisTimeoutError, OSError)


def unavailable(what: str) -> StoreUnavailable:
    """The answer to a request that needs Redis while it cannot be reached: -31004, HTTP 503
    with `Retry-After: 1`; nothing was done, the same request may be sent again."""
    return StoreUnavailable(f"{what} (Redis) cannot be reached; try again shortly", retry_after=1)


def as_config(value: RedisConfig | str | None) -> RedisConfig:
    """Accept a `RedisConfig`, a URL (as before) or None (the default local Redis)."""
    if isinstance(value, RedisConfig):
        return value
    return RedisConfig(value or DEFAULT_URL)
