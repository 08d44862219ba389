"""Live legacy sessions of one endpoint: lookup, a cap, and reaping of idle ones.

Session hygiene where other SDKs leak: nothing is registered until `initialize` succeeded, a
DELETE or reaping frees everything the session held, idle sessions are reaped by default, and
past `max_sessions` a new client gets a clear 503. `len(registry)` and `stats()` make it visible.
The clock is injectable and `reap()` can be called directly, so tests drive expiry without sleeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Iterator
from typing import Generic, Protocol, TypeVar

from ...protocol.errors import SessionLimitReached, SessionNotFound
from ..ownership import Owner, owned

log = logging.getLogger("mcpkit.legacy")

DEFAULT_IDLE_TIMEOUT = 900.0
DEFAULT_MAX_SESSIONS = 10_000


class Reapable(Protocol):
    id: str
    last_active: float

    @property
    def owner(self) -> Owner:
        """Who opened the session (`ownership`): only the same caller may use it."""
        ...

    def busy(self) -> bool:
        """True while a connection is attached (an open stream is activity, not idleness)."""
        ...

    def close(self) -> None: ...


S = TypeVar("S", bound=Reapable)


class SessionRegistry(Generic[S]):
    def __init__(
        self,
        *,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
        reap_interval: float | None = None,
        id_prefix: str = "",
    ) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be >= 1")
        if idle_timeout is not None and idle_timeout <= 0:
            raise ValueError("idle_timeout must be > 0 (or None to keep idle sessions)")
        if any(not 0x21 <= ord(c) <= 0x7E for c in id_prefix):
            raise ValueError("id_prefix must be visible ASCII (0x21-0x7E)")
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.clock = clock
        self.id_prefix = id_prefix
        self.reap_interval = reap_interval or (
            min(60.0, idle_timeout / 2) if idle_timeout is not None else None
        )
        self._sessions: dict[str, S] = {}
        self._reaper: asyncio.Task[None] | None = None
        self.opened = self.closed = self.reaped = self.rejected = 0

    def __len__(self) -> int:
        return len(self._sessions)

    def __iter__(self) -> Iterator[S]:
        return iter(list(self._sessions.values()))

    def stats(self) -> dict[str, int]:
        return {
            "live": len(self._sessions),
            "opened": self.opened,
            "closed": self.closed,
            "reaped": self.reaped,
            "rejected": self.rejected,
        }

    def new_id(self) -> str:
        """Unguessable, visible ASCII only (2025-11-25 transports > Session Management)."""
        return self.id_prefix + secrets.token_urlsafe(24)

    def reserve(self) -> None:
        """Raise SessionLimitReached (HTTP 503) unless one more session fits (idle ones go first)."""
        if len(self._sessions) >= self.max_sessions:
            self.reap()
        if len(self._sessions) >= self.max_sessions:
            self.rejected += 1
            raise SessionLimitReached(
                f"Too many open sessions (limit {self.max_sessions}); try again later"
            )

    def add(self, session: S) -> None:
        self.reserve()
        session.last_active = self.clock()
        self._sessions[session.id] = session
        self.opened += 1
        self._ensure_reaper()

    def get(self, session_id: str) -> S | None:
        return self._sessions.get(session_id)

    def lookup(self, session_id: str) -> S:
        """The caller's live session; SessionNotFound (404: initialize again) for an unknown
        id and for another caller's session alike, which is not revealed to exist."""
        session = self._sessions.get(session_id)
        if session is None or not owned(session.owner):
            raise SessionNotFound()
        return session

    def touch(self, session: S) -> None:
        session.last_active = self.clock()

    def remove(self, session_id: str) -> bool:
        """End one session (DELETE). False when it was not live."""
        session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        self.closed += 1
        session.close()
        return True

    def reap(self, now: float | None = None) -> int:
        """Close sessions idle longer than `idle_timeout` with no connection attached."""
        if self.idle_timeout is None:
            return 0
        limit = (self.clock() if now is None else now) - self.idle_timeout
        stale = [s for s in self._sessions.values() if s.last_active <= limit and not s.busy()]
        for session in stale:
            del self._sessions[session.id]
            session.close()
        if stale:
            self.reaped += len(stale)
            log.info("reaped %d idle legacy session(s); %d live", len(stale), len(self))
        return len(stale)

    def close_all(self) -> None:
        for session in list(self._sessions.values()):
            self.remove(session.id)
        if self._reaper is not None:
            self._reaper.cancel()
            self._reaper = None

    def _ensure_reaper(self) -> None:
        if self._reaper is None and self.reap_interval is not None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap_forever())

    async def _reap_forever(self) -> None:
        assert self.reap_interval is not None
        with contextlib.suppress(asyncio.CancelledError):
            while True:
                await asyncio.sleep(self.reap_interval)
                self.reap()
