"""What a server can say about its own state (for `/readyz`, dashboards and tests). No I/O."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BusHealth", "Health"]


@dataclass(frozen=True, slots=True)
class BusHealth:
    """The event bus that carries changes between instances (`subscriptions/listen`)."""

    kind: str  # "local" (one process) or "redis"
    connected: bool
    #: Wall-clock time (epoch seconds) when `connected` last changed.
    since: float
    #: Changes this instance sent to the bus, received from other instances and delivered to
    #: its streams, and lost (the bounded outbox overflowed while the bus was down).
    published: int = 0
    delivered: int = 0
    dropped: int = 0
    #: Changes waiting to be published (the bus is down, or just came back).
    pending: int = 0
    #: Why the bus is down, when it is.
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Health:
    """`server.health()`."""

    bus: BusHealth

    @property
    def ready(self) -> bool:
        """Every part this instance depends on is up."""
        return self.bus.connected
