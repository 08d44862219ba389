"""Deadlines for tool calls: per server (`timeout`) and per tool (`timeouts`), from config.

    "timeout": 60,
    "timeouts": {"create_return": 30,
                 "export_*": {"seconds": 20, "restartOnProgress": true, "max": 600}}

A number is a fixed deadline in seconds. With `restartOnProgress`, each progress notification
starts the deadline again, never past `max` seconds from the start (CANC-08; `max` defaults
to ten times `seconds`). Exact tool names win over patterns; patterns are tried in order.

A call past its deadline is cancelled: `within` cancels the awaiting call, and the client then
cancels it the way its transport defines (CANC-04/05/06: the HTTP stream is closed,
`notifications/cancelled` goes to a stdio server, `tasks/cancel` to a task).
"""

from __future__ import annotations

import asyncio
import fnmatch
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")
#: Called on each progress notification of the call (restarts the deadline when configured).
Progressed = Callable[[], None]


@dataclass(frozen=True, slots=True)
class Deadline:
    seconds: float
    restart_on_progress: bool = False
    max_seconds: float | None = None

    @property
    def overall(self) -> float:
        """The longest the call may take, whatever progress it reports."""
        if not self.restart_on_progress:
            return self.seconds
        return self.max_seconds if self.max_seconds is not None else 10 * self.seconds

    def describe(self) -> str:
        if not self.restart_on_progress:
            return f"{self.seconds:g} s"
        return f"{self.seconds:g} s without progress, {self.overall:g} s in all"


@dataclass(frozen=True, slots=True)
class ToolDeadlines:
    """The deadline of each tool of one server."""

    default: Deadline
    rules: tuple[tuple[str, Deadline], ...] = ()

    def for_tool(self, tool: str) -> Deadline:
        for pattern, deadline in self.rules:
            if pattern == tool:
                return deadline
        for pattern, deadline in self.rules:
            if fnmatch.fnmatchcase(tool, pattern):
                return deadline
        return self.default


class DeadlineExceeded(TimeoutError):
    """A tool call ran past its deadline and was cancelled."""

    def __init__(self, deadline: Deadline) -> None:
        super().__init__(f"no answer within its deadline ({deadline.describe()})")
        self.deadline = deadline


def parse_timeouts(value: Any, default_seconds: float) -> ToolDeadlines:
    """The `timeouts` object of a server entry (ValueError names the bad entry)."""
    default = Deadline(default_seconds)
    if value is None:
        return ToolDeadlines(default)
    if not isinstance(value, Mapping):
        raise ValueError('"timeouts" maps tool names (or patterns) to seconds')
    return ToolDeadlines(default, tuple((name, _deadline(name, v)) for name, v in value.items()))


def _deadline(name: str, value: Any) -> Deadline:
    where = f'"timeouts.{name}"'
    if isinstance(value, bool) or not isinstance(value, int | float | Mapping):
        raise ValueError(f'{where} is seconds or {{"seconds": N, "restartOnProgress": true}}')
    if not isinstance(value, Mapping):
        return Deadline(_positive(value, where))
    unknown = set(value) - {"seconds", "restartOnProgress", "max"}
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
    restart = value.get("restartOnProgress", False)
    if not isinstance(restart, bool):
        raise ValueError(f'{where}: "restartOnProgress" must be true or false')
    seconds = _positive(value.get("seconds"), f"{where}.seconds")
    top = value.get("max")
    overall = None if top is None else _positive(top, f"{where}.max")
    if overall is not None and overall < seconds:
        raise ValueError(f'{where}: "max" must be at least "seconds"')
    return Deadline(seconds, restart, overall)


def _positive(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"{where} must be a positive number of seconds")
    return float(value)


async def within(deadline: Deadline, call: Callable[[Progressed], Awaitable[T]]) -> T:
    """Run `call(progressed)` under `deadline`; raise `DeadlineExceeded` when it runs out.

    `call` gets a function to invoke on each progress notification: with
    `restart_on_progress` it moves the deadline to `seconds` from now, capped by `overall`.
    """
    loop = asyncio.get_running_loop()
    start = loop.time()
    last = start + deadline.overall
    scope = asyncio.timeout_at(min(start + deadline.seconds, last))

    def progressed() -> None:
        if deadline.restart_on_progress and not scope.expired():
            scope.reschedule(min(loop.time() + deadline.seconds, last))

    try:
        async with scope:
            return await call(progressed)
    except TimeoutError:
        if scope.expired():  # ours, not a client timeout from inside the call
            raise DeadlineExceeded(deadline) from None
        raise
