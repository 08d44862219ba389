"""Request deadlines (CANC-06..08): every request gets a timeout; a caller may let progress
notifications restart it, but never past an overall maximum counted from the start."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, NoReturn

from .errors import RequestTimeout
from .notifications import ProgressCallback

__all__ = ["Deadline", "no_response"]


def no_response(
    method: str, exc: TimeoutError, deadline: Deadline | None, timeout: float | None
) -> NoReturn:
    """A request's `TimeoutError` as the `RequestTimeout` that names the method and its limit
    (one already named passes through)."""
    if isinstance(exc, RequestTimeout):
        raise exc
    within = deadline.describe() if deadline is not None else f"within {timeout} s"
    raise RequestTimeout(f"{method} got no response {within}") from exc


class Deadline:
    """The time limit of one call: `timeout` seconds from the start or from the latest progress
    (`restart()`), and at most `maximum` seconds in all. Each request the call sends (MRTR
    rounds, a re-send) runs in its own `scope()` under the same limits."""

    __slots__ = ("_end", "_scope", "maximum", "timeout")

    def __init__(self, timeout: float | None, maximum: float | None) -> None:
        self.timeout = timeout
        self.maximum = maximum
        now = asyncio.get_running_loop().time()
        self._end = now + maximum if maximum is not None else None
        self._scope: asyncio.Timeout | None = None

    def _next(self) -> float | None:
        if self.timeout is None:
            return self._end
        when = asyncio.get_running_loop().time() + self.timeout
        return when if self._end is None else min(when, self._end)

    def scope(self) -> asyncio.Timeout:
        """An `asyncio.timeout` for one request of the call; `restart()` moves it."""
        self._scope = asyncio.timeout_at(self._next())
        return self._scope

    def restart(self) -> None:
        """Progress arrived: the timeout starts over, within the overall maximum (CANC-08)."""
        scope = self._scope
        if scope is None or scope.expired():
            return
        with contextlib.suppress(RuntimeError):  # the scope was just left
            scope.reschedule(self._next())

    def restarting(self, progress: ProgressCallback | None) -> ProgressCallback:
        """A progress callback that restarts the timeout, then calls the caller's own."""

        def on_progress(value: float, total: float | None, message: str | None) -> Any:
            self.restart()
            return progress(value, total, message) if progress is not None else None

        return on_progress

    def describe(self) -> str:
        """What ran out, for the `RequestTimeout` message."""
        if self._end is not None and asyncio.get_running_loop().time() >= self._end - 1e-3:
            return f"within its overall maximum of {self.maximum:g} s"
        return f"within {self.timeout:g} s of the start or the latest progress"
