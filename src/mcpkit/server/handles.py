"""State handles: state a tool returns as an opaque id and later calls hand back.

    baskets = server.handles.kind("basket", ttl=1800, start_over="call open_basket again")

    @server.tool()
    async def open_basket() -> dict[str, str]:
        return {"basket_id": await baskets.create({"items": []})}

    @server.tool()
    async def add_item(basket_id: str, sku: str) -> dict[str, object]:
        basket = await baskets.resolve(basket_id)      # HandleError for the model if not valid
        basket["items"].append(sku)
        await baskets.update(basket_id, basket)
        return basket

A handle is `kind_` + 24 random URL-safe characters (144 bits: unguessable), bound to the
principal that created it (the verified token's subject; None without auth) and alive for
`ttl` seconds. Resolving one that is unknown, of another kind or another principal's raises
`HandleError` (a `ToolError`: the call answers `isError: true`) saying which handles to use;
one that expired says so and how to start over. The model never learns whether a handle it
may not use exists. Expired records are remembered for `remember_expired` seconds so the
error can say "expired" rather than "unknown".

State lives in a `HandleStore`: `MemoryHandleStore` (the default; values kept as the objects
they are) or `RedisHandleStore` (several instances; values must be JSON-serialisable).
"""

from __future__ import annotations

import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from .auth.access import current_principal
from .tools import ToolError

__all__ = [
    "HandleError",
    "HandleKind",
    "HandleRecord",
    "HandleStore",
    "Handles",
    "MemoryHandleStore",
]

T = TypeVar("T")
_KIND_RE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
_HANDLE_RE = re.compile(r"^[a-z][a-z0-9_]{0,31}_[A-Za-z0-9_-]{24}$")


class HandleError(ToolError):
    """A handle that cannot be used; its message tells the model what to do instead."""


@dataclass(slots=True)
class HandleRecord:
    kind: str
    #: Who created it (None: an unauthenticated transport).
    principal: str | None
    #: Wall-clock seconds (shared by every instance).
    expires_at: float
    value: Any


class HandleStore(Protocol):
    """Where handle records live. `keep_seconds` covers the lifetime and the time expired
    records are remembered; a store may forget a record after it."""

    async def put(self, handle: str, record: HandleRecord, keep_seconds: float) -> None: ...

    async def get(self, handle: str) -> HandleRecord | None: ...

    async def replace(self, handle: str, record: HandleRecord) -> bool:
        """Store `record` under an existing handle, keeping its retention; False if gone."""
        ...

    async def delete(self, handle: str) -> bool: ...


class MemoryHandleStore:
    """Handles of one process, at most `max_handles` (the oldest go first)."""

    def __init__(self, max_handles: int = 100_000, clock: Callable[[], float] = time.time):
        self.max_handles = max_handles
        self.clock = clock
        self._records: OrderedDict[str, tuple[HandleRecord, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._records)

    async def put(self, handle: str, record: HandleRecord, keep_seconds: float) -> None:
        self._sweep()
        self._records[handle] = (record, self.clock() + keep_seconds)
        while len(self._records) > self.max_handles:
            self._records.popitem(last=False)

    async def get(self, handle: str) -> HandleRecord | None:
        entry = self._records.get(handle)
        if entry is None or entry[1] <= self.clock():
            return None
        return entry[0]

    async def replace(self, handle: str, record: HandleRecord) -> bool:
        entry = self._records.get(handle)
        if entry is None or entry[1] <= self.clock():
            return False
        self._records[handle] = (record, entry[1])
        return True

    async def delete(self, handle: str) -> bool:
        return self._records.pop(handle, None) is not None

    def _sweep(self) -> None:
        """Forget records past their retention, oldest first (insertion order ~ age)."""
        now = self.clock()
        while self._records:
            handle, (_, forget_at) = next(iter(self._records.items()))
            if forget_at > now:
                break
            del self._records[handle]


class Handles:
    """A server's handles (`server.handles`): make a `kind` per sort of state."""

    def __init__(
        self,
        store: HandleStore | None = None,
        *,
        remember_expired: float = 3600.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store: HandleStore = store if store is not None else MemoryHandleStore(clock=clock)
        self.remember_expired = remember_expired
        self.clock = clock
        self.kinds: dict[str, HandleKind[Any]] = {}

    def kind(
        self, name: str, *, ttl: float = 3600.0, start_over: str = "create a new one"
    ) -> HandleKind[Any]:
        """A sort of handle: `name` prefixes its ids (lowercase letters, digits, `_`); `ttl`
        is each handle's lifetime in seconds; `start_over` ends the error messages (what the
        model should do to get a fresh handle, e.g. "call open_basket again")."""
        if not _KIND_RE.match(name):
            raise ValueError(f"handle kind {name!r}: use 1-32 of a-z 0-9 _, starting with a letter")
        if name in self.kinds:
            raise ValueError(f"a handle kind named {name!r} already exists")
        if not ttl > 0:
            raise ValueError("ttl must be a number of seconds above 0")
        made: HandleKind[Any] = HandleKind(self, name, ttl, start_over)
        self.kinds[name] = made
        return made


class HandleKind(Generic[T]):
    """Create, resolve, update and discard the handles of one kind (see `Handles.kind`)."""

    def __init__(self, handles: Handles, name: str, ttl: float, start_over: str) -> None:
        self.handles = handles
        self.name = name
        self.ttl = ttl
        self.start_over = start_over

    async def create(self, value: T, *, ttl: float | None = None) -> str:
        """A new handle for `value`, owned by the calling principal."""
        lifetime = self.ttl if ttl is None else ttl
        handle = f"{self.name}_{secrets.token_urlsafe(18)}"
        record = HandleRecord(
            self.name, current_principal(), self.handles.clock() + lifetime, value
        )
        await self.handles.store.put(handle, record, lifetime + self.handles.remember_expired)
        return handle

    async def resolve(self, handle: str) -> T:
        """The value behind `handle`, for the calling principal; `HandleError` otherwise."""
        return (await self._record(handle)).value  # type: ignore[no-any-return]

    async def update(self, handle: str, value: T) -> None:
        """Replace the value behind a live handle of the caller (its lifetime is unchanged)."""
        record = await self._record(handle)
        record.value = value
        if not await self.handles.store.replace(handle, record):
            raise self._unknown(handle)

    async def discard(self, handle: str) -> T:
        """Remove a live handle of the caller; its value. Later use is answered as unknown."""
        record = await self._record(handle)
        await self.handles.store.delete(handle)
        return record.value  # type: ignore[no-any-return]

    async def _record(self, handle: str) -> HandleRecord:
        if type(handle) is not str or not _HANDLE_RE.match(handle):
            raise self._unknown(handle)
        record = await self.handles.store.get(handle)
        if record is None or record.kind != self.name or record.principal != current_principal():
            raise self._unknown(handle)  # another's handle is reported exactly like no handle
        overdue = self.handles.clock() - record.expires_at
        if overdue >= 0:
            raise HandleError(
                f"The {self.name} handle {handle!r} expired {_ago(overdue)} ago (it lasts "
                f"{_ago(self.ttl)}). Start over: {self.start_over}."
            )
        return record

    def _unknown(self, handle: object) -> HandleError:
        shown = repr(handle) if len(repr(handle)) <= 60 else repr(handle)[:57] + "..."
        return HandleError(
            f"Unknown {self.name} handle {shown}: use a {self.name} handle returned earlier in "
            f"this conversation, exactly as returned, or {self.start_over}."
        )

    def __repr__(self) -> str:
        return f"HandleKind({self.name!r}, ttl={self.ttl})"


def _ago(seconds: float) -> str:
    if seconds < 120:
        return f"{max(1, round(seconds))} s"
    if seconds < 7200:
        return f"{round(seconds / 60)} min"
    return f"{round(seconds / 3600)} h"
