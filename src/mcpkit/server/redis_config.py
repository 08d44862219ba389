"""One Redis configuration for every Redis-backed part of a server (event bus, single-use
requestState, idempotency records, state handles, tasks): one URL, one key prefix, one client.

    redis = RedisConfig("redis://127.0.0.1:6379/0", prefix="shop:")
    server = Server("shop", event_bus=RedisEventBus(redis), single_use_state=RedisStateStore(redis))

Needs the `redis` package (`pip install 'mcpkit[redis]'`); it is imported on first use.
"""

from __future__ import annotations

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
    #: The largest pause between reconnection attempts (capped exponential backoff).
    max_backoff: float = 5.0
    _client: Any = field(default=None, init=False, repr=False, compare=False)

    def key(self, part: str, ident: str = "") -> str:
        """The Redis key (or channel) of one part's record: `prefix` + `part` + `:` + `ident`."""
        return f"{self.prefix}{part}:{ident}" if ident else f"{self.prefix}{part}"

    def client(self) -> Any:
        """The shared `redis.asyncio.Redis` client of this configuration (made on first use)."""
        if self._client is None:
            self._client = self.new_client()
        return self._client

    def new_client(self) -> Any:
        """A client of its own (pub/sub readers hold a connection for themselves)."""
        try:
            import redis.asyncio as aioredis
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "Redis-backed state needs the redis package: pip install 'mcpkit[redis]'"
            ) from exc
        return aioredis.from_url(
            self.url,
            socket_timeout=self.socket_timeout,
            socket_connect_timeout=self.socket_timeout,
        )

    async def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()


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
