"""Change events across server instances: the bus behind `subscriptions/listen`.

A change on any instance (`notify_tools_changed()`, `notify_resource_updated(uri)`, a tool
registered at run time) is delivered to the listen streams of this instance directly and, through
the bus, to those of every other instance. The default bus is in-process only; `RedisEventBus`
(in `mcpkit.server.redis_backend`) connects instances through Redis pub/sub.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

#: Delivers one change to this instance's listen streams: (method, params, uri).
Deliver = Callable[[str, "dict[str, Any] | None", "str | None"], None]


class EventBus(Protocol):
    async def start(self, deliver: Deliver) -> None:
        """Begin receiving other instances' changes; `deliver` hands them to local streams."""
        ...

    def publish(self, method: str, params: dict[str, Any] | None, uri: str | None) -> None:
        """Announce a change made on this instance to the others (never blocks)."""
        ...

    async def close(self) -> None: ...


class LocalEventBus:
    """One process: nothing to share."""

    async def start(self, deliver: Deliver) -> None:
        return None

    def publish(self, method: str, params: dict[str, Any] | None, uri: str | None) -> None:
        return None

    async def close(self) -> None:
        return None
