"""How many connections a served instance takes, and how refusals past that are told.

A listen stream (2026-07-28 `subscriptions/listen`, 2025-11-25 GET) holds its connection for
as long as the client listens, so listeners and calls get separate budgets: listen streams
stop at `max_listen_streams`, below `max_connections`, and the difference is kept for calls
(a call always finds room, however many clients listen). `serve_http` (`server.run`, `mcpkit
run`, never a mounted app) first raises the process's soft file-descriptor limit to its hard
one, then sizes both from it (`budget_for`).

A refusal is logged in one line per interval with the count of that interval (`RefusalLog`),
not a line per refused connection.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

#: Descriptors kept for everything but client connections: listening sockets, Redis, files,
#: logs, the event loop's own.
SPARE_FDS = 100
#: The share of the connections kept for calls (at least `MIN_CALL_RESERVE` of them).
CALL_SHARE = 10
MIN_CALL_RESERVE = 100
REFUSAL_INTERVAL = 10.0


@dataclass(frozen=True, slots=True)
class Budget:
    """Open connections at most, and listen streams at most (fewer: the rest is for calls)."""

    max_connections: int
    max_listen_streams: int


def raise_fd_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard one (as far as the OS lets); the soft limit
    now. Without `resource` (Windows): 1024, what a default process has."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft == resource.RLIM_INFINITY or soft >= target:
        return soft if soft != resource.RLIM_INFINITY else target
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError):  # e.g. macOS caps it below the hard limit (OPEN_MAX)
        return soft
    return target


def budget_for(fd_limit: int) -> Budget:
    """The default caps for a process that may hold `fd_limit` descriptors."""
    return split(max(fd_limit - SPARE_FDS, 2 * MIN_CALL_RESERVE))


def split(connections: int) -> Budget:
    """`connections` shared: a tenth (at least 100, at most half) kept for calls."""
    reserve = min(max(connections // CALL_SHARE, MIN_CALL_RESERVE), connections // 2)
    return Budget(max_connections=connections, max_listen_streams=connections - reserve)


class RefusalLog:
    """Refusals of one kind, told in at most one WARNING line per `interval` seconds: the
    first at once, then each interval that had any, with their count."""

    def __init__(self, log: logging.Logger, noun: str, interval: float = REFUSAL_INTERVAL) -> None:
        self.log = log
        self.noun = noun
        self.interval = interval
        self.count = 0
        self.reason = ""
        self._timer: asyncio.TimerHandle | None = None

    def refused(self, reason: str) -> None:
        """One refusal, for `reason` (what was reached, and what to do about it)."""
        self.count += 1
        self.reason = reason
        if self._timer is None:
            self._tell(first=True)

    def _tell(self, first: bool = False) -> None:
        self._timer = None
        if not self.count:
            return
        plural = self.noun if self.count == 1 else self.noun + "s"
        during = "" if first else f" in the last {self.interval:g} s"
        self.log.warning("refused %s %s%s: %s", f"{self.count:,}", plural, during, self.reason)
        self.count = 0
        self._timer = asyncio.get_running_loop().call_later(self.interval, self._tell)
