"""Redis for several server instances: an `EventBus` (a Redis stream) that heals, and a single-use
`StateStore`. Both take a `RedisConfig` (or, as before, a URL).

    redis = RedisConfig("redis://10.0.0.5:6379/0", prefix="shop:")
    server = Server("shop", event_bus=RedisEventBus(redis), state_keys=[KEY],
                    single_use_state=RedisStateStore(redis))

Needs the `redis` package (`pip install mcpkit[redis]`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import deque
from typing import Any

import orjson

from .events import Deliver
from .health import BusHealth
from .redis_config import RedisConfig, as_config, unavailable, unreachable, until_queued

__all__ = ["RedisEventBus", "RedisStateStore"]

log = logging.getLogger("mcpkit.server")

#: What a listen stream may have missed while the bus was down: told once it is back.
_RESYNC = (
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
)


class RedisEventBus:
    """Change events shared by every instance through one Redis stream (`prefix + "events"`,
    or `channel`), trimmed to about `retain` entries.

    A stream rather than pub/sub, so that an outage loses nothing: each instance reads on from
    the last entry it saw, and sees what others added while it was reconnecting. Redis may go
    away at any time and the server keeps serving: the reader reconnects with capped exponential
    backoff (`RedisConfig.min_backoff` to `max_backoff`) for as long as it takes; changes made
    meanwhile wait in a bounded outbox (`max_pending`, oldest dropped first) and are added once
    Redis is back. So a change made after Redis accepts connections again reaches every
    instance within `max_backoff` (plus delivery). After an outage, this instance's listen
    streams are also told that the lists may have changed (a restarted Redis may have lost
    entries). `health()` reports all of it.
    """

    def __init__(
        self,
        redis: RedisConfig | str | None = None,
        channel: str | None = None,
        *,
        max_pending: int = 1000,
        retain: int = 10_000,
    ) -> None:
        self.redis = as_config(redis)
        self.channel = channel or self.redis.key("events")
        self.instance = uuid.uuid4().hex
        self.max_pending = max_pending
        self.retain = retain
        self._deliver: Deliver | None = None
        self._outbox: deque[bytes] = deque()
        self._wake = asyncio.Event()  # something to publish, or the bus is back
        self._empty = asyncio.Event()  # everything was published
        self._tasks: list[asyncio.Task[None]] = []
        self._closing = False
        self._last_id: bytes | None = None  # the last stream entry read
        self._connected = False
        self._since = time.time()
        self._error: str | None = None
        self._published = self._delivered = self._dropped = 0

    @property
    def url(self) -> str:
        return self.redis.url

    # -- state ------------------------------------------------------------------------------
    def health(self) -> BusHealth:
        return BusHealth(
            "redis",
            self._connected,
            self._since,
            self._published,
            self._delivered,
            self._dropped,
            len(self._outbox),
            self._error,
        )

    def _up(self) -> None:
        if self._connected:
            return
        outage = self._error is not None
        self._connected, self._since, self._error = True, time.time(), None
        self._wake.set()  # the publisher may be waiting out its backoff
        if outage:
            log.warning("redis event bus: connected again to %s", self.redis.url)
            if self._deliver is not None:
                for method in _RESYNC:
                    self._deliver(method, None, None)

    def _down(self, exc: BaseException) -> None:
        """The reader lost Redis (only the reader decides `connected`)."""
        reason = f"{type(exc).__name__}: {exc}"
        if self._connected or self._error is None:
            log.warning(
                "redis event bus: %s is unavailable (%s); retrying every %g s at most",
                self.redis.url,
                reason,
                self.redis.max_backoff,
            )
        if self._connected:
            self._since = time.time()
        self._connected, self._error = False, reason

    # -- lifecycle --------------------------------------------------------------------------
    async def start(self, deliver: Deliver) -> None:
        """Connect (waiting at most `socket_timeout` for Redis), then keep reading and
        publishing in the background. A Redis that is down at start-up is a warning, not a
        failure: the bus connects when it can."""
        if self._tasks:
            return
        self._deliver, self._closing = deliver, False
        loop = asyncio.get_running_loop()
        first = loop.create_future()
        self._tasks = [
            loop.create_task(self._listen(first), name="mcpkit-redis-listen"),
            loop.create_task(self._publish(), name="mcpkit-redis-publish"),
        ]
        await asyncio.shield(first)

    async def close(self) -> None:
        if self._outbox and self._connected:  # a last chance for the newest changes
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._empty.wait(), 2)
        tasks, self._tasks = self._tasks, []
        # redis-py (8.1, Python 3.11) may swallow a cancellation that lands inside a read; the
        # reader also stops at its next read's end (at most `block` ms) on this flag.
        self._closing = True
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._connected = False

    # -- receiving --------------------------------------------------------------------------
    async def _listen(self, first: asyncio.Future[None]) -> None:
        attempt = 0
        # A blocking read returns empty after `block` ms: well within the socket timeout, so
        # a silent connection is noticed by that timeout and a live one never trips it.
        block = max(1, int(min(self.redis.health_interval, self.redis.socket_timeout / 2) * 1000))
        while not self._closing:
            client = self.redis.new_client(retries=0)
            try:
                if self._last_id is None:  # read what is added from now on
                    seconds, micros = await client.time()
                    self._last_id = b"%d-0" % (seconds * 1000 + micros // 1000)
                else:
                    await client.ping()
                self._up()
                attempt = 0
                if not first.done():
                    first.set_result(None)
                while not self._closing:
                    batches = await client.xread({self.channel: self._last_id}, block=block)
                    for _stream, entries in batches or ():
                        for entry_id, fields in entries:
                            self._last_id = entry_id
                            self._receive(fields.get(b"e", b""))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._down(exc)
            finally:
                with contextlib.suppress(Exception):
                    await client.aclose()
            if not first.done():
                first.set_result(None)  # serve anyway; the bus follows
            if self._closing:
                return
            await asyncio.sleep(self.redis.backoff(attempt))
            attempt += 1

    def _receive(self, data: bytes) -> None:
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError:
            return
        if not isinstance(event, dict) or event.get("i") == self.instance:
            return
        method = event.get("m")
        if isinstance(method, str) and self._deliver is not None:
            self._delivered += 1
            self._deliver(method, event.get("p"), event.get("u"))

    # -- sending ----------------------------------------------------------------------------
    def publish(self, method: str, params: dict[str, Any] | None, uri: str | None) -> None:
        if not self._tasks:
            return
        if len(self._outbox) >= self.max_pending:
            self._outbox.popleft()
            self._dropped += 1
        self._outbox.append(orjson.dumps({"i": self.instance, "m": method, "p": params, "u": uri}))
        self._empty.clear()
        self._wake.set()

    async def _publish(self) -> None:
        """One task adds the outbox to the stream in order; a failure waits out the backoff
        (or the reader's reconnection, whichever comes first) and tries again. Never raises."""
        client = self.redis.new_client(retries=0)
        attempt = 0
        try:
            while True:
                await until_queued(self._outbox, self._empty, self._wake)
                try:
                    await client.xadd(
                        self.channel, {b"e": self._outbox[0]}, maxlen=self.retain, approximate=True
                    )
                except Exception as exc:
                    if self._connected:  # the reader has not noticed (yet)
                        log.warning("redis event bus: cannot publish (%s); will retry", exc)
                    self._wake.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), self.redis.backoff(attempt))
                    attempt += 1
                    continue
                attempt = 0
                if self._outbox:
                    self._outbox.popleft()
                    self._published += 1
        finally:
            with contextlib.suppress(Exception):
                await client.aclose()


class RedisStateStore:
    """Single-use requestState across instances (MRTR-11): SET NX with an expiry under
    `prefix + "state:" + id`.

    A Redis restart may cut the reply to a SET that Redis did apply (and, with AOF, keeps).
    Each consumption therefore writes a mark of its own (`SET ... NX GET`) and, while Redis is
    unreachable, tries again for up to `socket_timeout`: finding its own mark means the earlier
    try took the state, so a restart does not turn a first use into "already used". Only an
    outage longer than that answers StoreUnavailable, and then the state may be spent."""

    def __init__(self, redis: RedisConfig | str | None = None, prefix: str | None = None) -> None:
        self.redis = as_config(redis)
        #: Key prefix of the records (default: the configuration's `state:` part).
        self.prefix = prefix if prefix is not None else self.redis.key("state") + ":"

    @property
    def url(self) -> str:
        return self.redis.url

    async def consume(self, state_id: str, ttl_seconds: float) -> bool:
        client = self.redis.client()
        key, mark, ttl = self.prefix + state_id, uuid.uuid4().bytes, max(1, int(ttl_seconds))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.redis.socket_timeout
        attempt = 0
        while True:
            try:
                before = await client.set(key, mark, nx=True, get=True, ex=ttl)
            except unreachable():
                if loop.time() >= deadline:
                    raise unavailable("The single-use state store") from None
                await asyncio.sleep(self.redis.backoff(attempt))
                attempt += 1
                continue
            return before is None or before == mark
