"""A server that starts on first use (`"start": "lazy"`) and stops when idle (`idleTimeout`).

At host start its tools (and instructions, resources) are offered from the record of its last
start (`records.py`), and no process runs: the link is `idle`. The first call (or resource
read) starts it: `wake` starts the usual supervisor, and every caller that arrives meanwhile
waits for that one start. The start lists the server again, as every start does: a changed
definition goes through the pins (withheld until approved), and the record is saved afresh.
After `idleTimeout` seconds without a call the process is stopped and the link is idle again,
its last tools still offered. A server with no record yet (or with the store off) is started
at once to make one, and stopped when idle like the others.

A record past its `ttlMs` is offered as a stale catalogue (CACHE-07): the link's `detail` and
the user are told so; the first start refreshes it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

from ..client import ClientError, Tool
from ..protocol.errors import MCPError
from .link import ServerLink, log
from .records import Record, RecordStore, snapshot
from .supervision import LinkState


def declared(link: ServerLink) -> dict[str, Any]:
    """The capabilities a server declared: at its start, or in the record it is offered from
    while not running (empty: not known yet)."""
    info = link.client.info if link.client is not None else None
    if info is not None:
        return dict(info.capabilities)
    record = link.record if isinstance(link, LazyLink) else None
    return dict(record.capabilities) if record is not None else {}


class LazyLink(ServerLink):
    """A `ServerLink` started by its first call, stopped after `idleTimeout` without one."""

    def __init__(self, *args: Any, store: RecordStore | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.store = store
        #: The record the catalogue comes from while idle (None: none yet, or the store is off).
        self.record: Record | None = None
        #: The record offered is past its ttlMs (CACHE-07): a stale catalogue until started.
        self.record_stale = False
        self._busy = 0
        self._quiet = asyncio.Event()
        self._quiet.set()
        self._last_use = 0.0
        self._idler: asyncio.Task[None] | None = None
        self._waking = False
        self._ever_up = False

    @property
    def idle(self) -> bool:
        """Not running, or starting on a first call: offered from its record meanwhile (a call
        that arrives during the start waits for it, rather than being told to try later)."""
        if self.state is LinkState.CONNECTING:
            return self._waking
        return self.state is LinkState.IDLE

    # -- start --------------------------------------------------------------------------
    def start(self) -> None:
        record = None if self.store is None else self.store.load(self.config)
        if self.state is LinkState.DISABLED or record is None:
            if self.state is not LinkState.DISABLED:
                why = "yet: starting it once to make one" if self.store else "(records are off)"
                self.ui.info(f"server {self.name!r} has no record of its tools {why}")
            super().start()
            return
        self.record = record
        self._offer([Tool.from_wire(t) for t in record.tools if isinstance(t.get("name"), str)])
        assert self.store is not None
        now = self.store.clock()
        self.record_stale = not record.fresh(now)
        detail = "not started: offered from its record"
        if self.record_stale:
            detail = "not started: offered from a stale record (past its ttlMs)"
            self.ui.info(
                f"server {self.name!r}: its tools are offered from a record "
                f"{record.age(now):.0f} s old, past its ttlMs (stale); it is refreshed when the "
                "server starts"
            )
        self._set(LinkState.IDLE, detail, announce=False)
        self._settled.set()

    async def wake(self) -> None:
        """Start the server if it is idle and wait for that start (one start for all callers
        meanwhile); a server that is already up, or down and backing off, is left as it is."""
        self._last_use = asyncio.get_running_loop().time()
        self._begin()
        if self._waking:
            await self.until(LinkState.READY, LinkState.DEGRADED, LinkState.DOWN)

    def _begin(self) -> None:
        if self.state is LinkState.IDLE:
            self._set(LinkState.CONNECTING, "starting on first use")
            self._waking = True  # until the start has ended (`_set`)
            self._task = asyncio.create_task(self._supervise(), name=f"mcpkit-link-{self.name}")

    def _set(self, state: LinkState, *args: Any, **kwargs: Any) -> None:
        if state is not LinkState.CONNECTING:
            self._waking = False
        super()._set(state, *args, **kwargs)

    def reconnect_now(self) -> None:
        """An idle server is started (a reconnect asked for by the user, `/reconnect`)."""
        if self.idle:
            self._last_use = asyncio.get_running_loop().time()
            self._begin()
        else:
            super().reconnect_now()

    def unavailable(self) -> str:
        if self._ever_up:
            return super().unavailable()
        again = f" (the host tries again in {self.retry_in:.0f} s)" if self.retry_in else ""
        return (
            f"The {self.name!r} server failed to start on first use{again}; its tools cannot "
            "be called until it starts."
        )

    async def _open(self) -> None:
        await super()._open()
        self._ever_up = True
        await self._save()
        if self.config.idle_timeout is not None and self._idler is None:
            self._last_use = asyncio.get_running_loop().time()
            self._idler = asyncio.create_task(self._stop_when_idle(self.config.idle_timeout))

    async def _save(self) -> None:
        """The record of what the server said at this start (or after a change)."""
        if self.client is None:
            return
        now = self.store.clock() if self.store is not None else 0.0
        try:
            self.record = await snapshot(self.client, now)
        except (MCPError, ClientError) as exc:
            log.info("server %r: no record made: %s", self.name, exc)
            return
        self.record_stale = False
        if self.store is not None:
            self.store.save(self.config, self.record)

    async def refresh(self) -> None:
        changed = self.stale and self.up
        await super().refresh()
        if changed and self.up:  # list_changed (CACHE-14): the record is renewed too
            await self._save()

    # -- stop ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def in_use(self) -> Iterator[None]:
        self._busy += 1
        self._quiet.clear()
        try:
            yield
        finally:
            self._busy -= 1
            self._last_use = asyncio.get_running_loop().time()
            if self._busy == 0:
                self._quiet.set()

    async def _stop_when_idle(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._quiet.wait()
            remaining = self._last_use + seconds - loop.time()
            if remaining <= 0 and self._busy == 0:
                break
            await asyncio.sleep(max(remaining, 0.01))  # a timer, not a synchronisation
        self._idler = None
        await self._stop(f"stopped after {seconds:g} s without a call (idleTimeout)")

    async def _stop(self, why: str) -> None:
        """Stop the process; its tools stay offered (from its last listing) while idle."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        tools, withheld = self.tools or self.known, self.withheld
        await self._drop()
        self.tools = self.known = tools
        self.withheld = withheld
        log.info("server %r: %s", self.name, why)
        self._set(LinkState.IDLE, why)

    async def close(self) -> None:
        idler, self._idler = self._idler, None
        if idler is not None:
            idler.cancel()
            await asyncio.gather(idler, return_exceptions=True)
        await super().close()
