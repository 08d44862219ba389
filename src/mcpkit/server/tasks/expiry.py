"""Tasks end at their TTL on time, whether or not anyone asks about them (tasks extension:
a task's `ttlMs`).

A store keeps one `ExpiryTimer`, set for its oldest task's expiry: tasks share the store's
TTL, so the oldest expires first. When it fires, the store drops every task past its TTL,
fails one still running with `expired_error()` (its handler is cancelled: servers MAY mark a
task `failed` once its TTL elapsed, then delete it), and sets the timer for the next oldest.
Nothing is scheduled per call or per task, and a store that holds no task holds no timer.

What a client sees then: a listen stream following the task saw it end `failed`; `tasks/get`,
`tasks/update` and `tasks/cancel` answer -32602, as for any unknown task (TASK-18: a purged
task may be reported as not found).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

__all__ = ["ExpiryTimer"]

#: Added to every delay: a timer that fires a hair before the wall clock reaches the expiry
#: (the loop's clock is not the wall clock) is set again, never spins.
SLACK_S = 0.01


class ExpiryTimer:
    """One `call_later` handle at a time; `fire` runs when it is due."""

    __slots__ = ("_fire", "_handle")

    def __init__(self, fire: Callable[[], None]) -> None:
        self._fire = fire
        self._handle: asyncio.TimerHandle | None = None

    @property
    def due(self) -> float | None:
        """When it fires (event loop time); None while it is not set."""
        return self._handle.when() if self._handle is not None else None

    def arm(self, expires: float | None) -> None:
        """Fire at `expires` (wall-clock seconds), unless it is set already (for the oldest
        task, which expires first) or there is nothing to expire."""
        if self._handle is None and expires is not None:
            delay = max(expires - time.time(), 0.0) + SLACK_S
            self._handle = asyncio.get_running_loop().call_later(delay, self._run)

    def disarm(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _run(self) -> None:
        self._handle = None
        self._fire()
