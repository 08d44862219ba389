"""Keyed calls run detached from their request: the idempotency guard's runner and its cap.

A `tools/call` with an idempotency key runs in a task of its own, not in its request's: when
the request ends early (on the 2026-07-28 HTTP wire a disconnect is the cancel, TR-HTTP-23),
the call goes on to its outcome, which the store keeps for the re-send (CANC-11: a request the
server does not cancel; nothing more is sent on the closed stream, TR-HTTP-24). Only an
explicit cancel stops it (`notifications/cancelled`: stdio and 2025-11-25 sessions), and so
does the end of the process (`stop`, after a drain's grace).

Such calls are capped, in total and per caller (`max_running`, `max_running_per_caller` of
the store): past either, a new keyed call is refused with `ServerBusy` before it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Callable, Coroutine
from typing import Any, Final

from ..protocol.errors import ServerBusy

__all__ = ["STOPPED", "DetachedCalls"]

#: The message `stop` cancels the calls still running with (the process is ending).
STOPPED: Final = "the server stopped"


class DetachedCalls:
    """The keyed calls running in one server, each owned by no request."""

    def __init__(self, max_running: int, max_running_per_caller: int) -> None:
        self.max_running = max_running
        self.max_running_per_caller = max_running_per_caller
        self._callers: dict[asyncio.Task[Any], str | None] = {}
        self._per_caller: Counter[str | None] = Counter()

    def __len__(self) -> int:
        return len(self._callers)

    def start(
        self, caller: str | None, call: Callable[[], Coroutine[Any, Any, Any]]
    ) -> asyncio.Task[Any]:
        """Run `call()` in a task of its own (the current context copied: the caller's access,
        the request's telemetry), or refuse it when the caps say there is no room."""
        if len(self._callers) >= self.max_running:
            raise ServerBusy(
                f"Too many keyed tool calls running on this server ({self.max_running}); "
                "try again later",
                retry_after=1,
            )
        if self._per_caller[caller] >= self.max_running_per_caller:
            raise ServerBusy(
                f"Too many keyed tool calls of yours running ({self.max_running_per_caller}); "
                "wait for one to finish, then try again",
                retry_after=1,
            )
        task = asyncio.get_running_loop().create_task(call())
        self._callers[task] = caller
        self._per_caller[caller] += 1
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        caller = self._callers.pop(task)
        left = self._per_caller[caller] - 1
        if left:
            self._per_caller[caller] = left
        else:
            del self._per_caller[caller]
        if not task.cancelled():
            task.exception()  # seen here: a call whose request is gone fails quietly

    async def settle(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for the running calls to reach their outcome."""
        if self._callers:
            await asyncio.wait(list(self._callers), timeout=timeout)

    async def stop(self) -> int:
        """Cancel the calls still running (each leaves "outcome unknown") and wait for them;
        how many there were."""
        running = list(self._callers)
        for task in running:
            task.cancel(STOPPED)
        for task in running:
            with contextlib.suppress(BaseException):
                await task
        return len(running)
