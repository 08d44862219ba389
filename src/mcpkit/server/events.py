"""Change events across server instances: the bus behind `subscriptions/listen`.

A change on any instance (`notify_tools_changed()`, `notify_resource_updated(uri)`, a tool
registered at run time) is delivered to the listen streams of this instance directly and, through
the bus, to those of every other instance. The default bus is in-process only; `RedisEventBus`
(in `mcpkit.server.redis_backend`) connects instances through Redis pub/sub and heals after an
outage; `health()` says how it is doing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .health import BusHealth

#: Delivers one change to this instance's listen streams: (method, params, uri).
Deliver = Callable[[str, "dict[str, Any] | None", "str | None"], None]


class EventBus(Protocol):
    async def start(self, deliver: Deliver) -> None:
        """Begin receiving other instances' changes; `deliver` hands them to local streams."""
        ...

    def publish(self, method: str, params: dict[str, Any] | None, uri: str | None) -> None:
        """Announce a change made on this instance to the others (never blocks, never raises)."""
        ...

    def health(self) -> BusHealth:
        """Connected or not since when, and what went through."""
        ...

    async def close(self) -> None: ...


class LocalEventBus:
    """One process: nothing to share."""

    def __init__(self) -> None:
        self._since = time.time()

    async def start(self, deliver: Deliver) -> None:
        return None

    def health(self) -> BusHealth:
        from .health import BusHealth

        return BusHealth("local", True, self._since)

    def publish(self, method: str, params: dict[str, Any] | None, uri: str | None) -> None:
        return None

    async def close(self) -> None:
        return None
