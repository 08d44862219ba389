"""Deadlines for tool calls: per server (`timeout`) and per tool (`timeouts`), from config.

    "timeout": 60,
    "timeouts": {"create_return": 30,
                 "export_*": {"seconds": 20, "restartOnProgress": true, "max": 600}}

A number is a fixed deadline in seconds. With `restartOnProgress`, each progress notification
starts the deadline again, never past `max` seconds from the start (CANC-08; `max` defaults
to ten times `seconds`). Exact tool names win over patterns; patterns are tried in order.

Time spent waiting for the user (a form the server asked for, a sampling request the host's
model answers) does not count: the call's `Clock` is paused meanwhile.

A call past its deadline is cancelled: `within` cancels the awaiting call, and the client then
cancels it the way its transport defines (CANC-04/05/06: the HTTP stream is closed,
`notifications/cancelled` goes to a stdio server, `tasks/cancel` to a task).
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


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


class Clock:
    """The running deadline of one call: progress may restart it, and it stands still while
    the call waits for the user."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline
        self._loop = asyncio.get_running_loop()
        start = self._loop.time()
        self._last = start + deadline.overall
        self.scope = asyncio.timeout_at(min(start + deadline.seconds, self._last))
        self._pauses = 0
        self._left = 0.0
        self._since = 0.0
        self._running = False

    def progressed(self) -> None:
        """A progress notification: with `restart_on_progress`, `seconds` from now again."""
        if self.deadline.restart_on_progress and self._running and not self._pauses:
            self.scope.reschedule(min(self._loop.time() + self.deadline.seconds, self._last))

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """While the user is asked something on the call's behalf, the deadline waits."""
        if self._running and not self._pauses:
            when = self.scope.when()
            self._since = self._loop.time()
            self._left = (when if when is not None else self._since) - self._since
            self.scope.reschedule(None)
        self._pauses += 1
        try:
            yield
        finally:
            self._pauses -= 1
            if self._running and not self._pauses:
                now = self._loop.time()
                self._last += now - self._since
                self.scope.reschedule(now + self._left)

    async def run(self, call: Callable[[Clock], Awaitable[T]]) -> T:
        try:
            async with self.scope:
                self._running = True
                try:
                    return await call(self)
                finally:
                    self._running = False
        except TimeoutError:
            if self.scope.expired():  # ours, not a client timeout from inside the call
                raise DeadlineExceeded(self.deadline) from None
            raise


async def within(deadline: Deadline, call: Callable[[Clock], Awaitable[T]]) -> T:
    """Run `call(clock)` under `deadline`; raise `DeadlineExceeded` when it runs out.

    The call reports progress with `clock.progressed()` and waits for the user inside
    `with clock.paused():`.
    """
    return await Clock(deadline).run(call)


class Clocks:
    """The running deadlines of one server's calls, which all stand still while the user
    answers that server (the client does not say which call asked, so all of them wait)."""

    def __init__(self) -> None:
        self._running: set[Clock] = set()

    @contextlib.contextmanager
    def timing(self, clock: Clock) -> Iterator[None]:
        """A call to this server runs against `clock`."""
        self._running.add(clock)
        try:
            yield
        finally:
            self._running.discard(clock)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            for clock in list(self._running):
                stack.enter_context(clock.paused())
            yield
