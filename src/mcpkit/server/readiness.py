"""Whether this instance should get traffic: what `/readyz` answers (no I/O).

    server.readiness.add_check("database", lambda: pool.healthy)
    server.readiness.drain()      # stop getting traffic before a shutdown

Ready means every check passes and the instance is not draining. A check is a plain callable
returning True when its dependency is usable; one that raises counts as failing. Liveness
(`/healthz`) is not here: the process answering at all is the answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

__all__ = ["Readiness", "watch"]

log = logging.getLogger("mcpkit.health")


class Readiness:
    """Named checks plus a draining flag."""

    def __init__(self) -> None:
        self._checks: dict[str, Callable[[], bool]] = {}
        #: Set by `drain()`: the instance finishes what it has and takes nothing new.
        self.draining = False
        self._last: list[str] | None = None

    def add_check(self, name: str, check: Callable[[], bool]) -> None:
        """`check()` must be quick and must not block (it runs on the event loop)."""
        self._checks[name] = check

    def remove_check(self, name: str) -> None:
        self._checks.pop(name, None)

    def drain(self) -> None:
        """From now on, not ready: balancers stop sending new work here."""
        self.draining = True

    def failing(self) -> list[str]:
        """Why the instance is not ready: the names of failing checks, and "draining"."""
        out = ["draining"] if self.draining else []
        for name, check in self._checks.items():
            try:
                ok = bool(check())
            except Exception:
                log.exception("readiness check %r failed", name)
                ok = False
            if not ok:
                out.append(name)
        if out != self._last:  # transitions are logged (stdio servers report this way)
            if out:
                log.warning("not ready: %s", ", ".join(out))
            elif self._last is not None:
                log.info("ready")
            self._last = out
        return out

    @property
    def has_checks(self) -> bool:
        return bool(self._checks)

    @property
    def ready(self) -> bool:
        return not self.failing()


async def watch(readiness: Readiness, interval: float = 5.0) -> None:
    """Check every `interval` seconds, so that changes reach the log (stdio servers have no
    `/readyz`: their readiness is reported there)."""
    while True:
        readiness.failing()
        await asyncio.sleep(interval)
