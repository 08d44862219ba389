"""`subscriptions/listen` streams (SUB-*): who listens for what, bounded per-stream queues."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Protocol

from ..protocol.errors import InvalidParams
from ..protocol.tasks import TASK_STATUS_NOTIFICATION
from ..protocol.versions import META_SUBSCRIPTION_ID
from .events import Deliver, EventBus, LocalEventBus

#: Filter keys (SubscriptionFilter) and the notification each one lets through.
LIST_FILTERS = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}
RESOURCE_UPDATED = "notifications/resources/updated"
_CLOSED: Any = object()


class _Task(Protocol):
    @property
    def id(self) -> str: ...
    def detailed(self) -> dict[str, Any]: ...


class Subscription:
    """One open listen stream. Iterate `next()` for ready-to-send notification messages."""

    __slots__ = ("_queue", "closed", "filter", "id", "methods", "overflowed", "task_ids", "uris")

    def __init__(self, sub_id: str | int, honoured: dict[str, Any], max_queue: int) -> None:
        self.id = sub_id
        self.filter = honoured
        self.methods = frozenset(LIST_FILTERS[k] for k in honoured if k in LIST_FILTERS)
        self.uris = frozenset(honoured.get("resourceSubscriptions", ()))
        self.task_ids = frozenset(honoured.get("taskIds", ()))
        self._queue: asyncio.Queue[Any] = asyncio.Queue(max_queue)
        self.closed = False
        self.overflowed = False

    def wants(self, method: str, uri: str | None) -> bool:
        if method == RESOURCE_UPDATED:
            return uri is not None and any(
                uri == u or uri.startswith(u.rstrip("/") + "/") for u in self.uris
            )
        return method in self.methods

    def message(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        p = dict(params) if params else {}
        meta = dict(p.get("_meta") or {})
        meta[META_SUBSCRIPTION_ID] = self.id  # SUB-07 / BASE-52
        p["_meta"] = meta
        return {"jsonrpc": "2.0", "method": method, "params": p}

    def acknowledgement(self) -> dict[str, Any]:
        # SUB-03: the first message on the stream.
        return self.message(
            "notifications/subscriptions/acknowledged", {"notifications": self.filter}
        )

    def final_result(self) -> dict[str, Any]:
        # SUB-11/12: graceful closure by the server.
        return {"resultType": "complete", "_meta": {META_SUBSCRIPTION_ID: self.id}}

    def offer(self, item: Any) -> None:
        if self.closed:
            return
        try:
            self._queue.put_nowait(item)
        except asyncio.QueueFull:
            # A client that does not read its stream loses it rather than growing memory.
            self.overflowed = True
            self.closed = True
            self._queue.get_nowait()
            self._queue.put_nowait(_CLOSED)

    async def next(self, timeout: float | None) -> dict[str, Any] | None:
        """The next notification; None on timeout (send a keep-alive); raises EOFError on close."""
        try:
            item = await asyncio.wait_for(self._queue.get(), timeout)
        except TimeoutError:
            return None
        if item is _CLOSED:
            raise EOFError
        return item  # type: ignore[no-any-return]


class SubscriptionHub:
    """All listen streams of one server process. Thread-safe `publish`; changes also go to the
    event bus so that other instances' streams hear them."""

    def __init__(self, max_queue: int = 256, bus: EventBus | None = None) -> None:
        self._subs: set[Subscription] = set()
        self._max_queue = max_queue
        self._loop: asyncio.AbstractEventLoop | None = None
        self.bus: EventBus = bus or LocalEventBus()
        self._started = False
        #: After `close_all()` (shutdown, drain): a new stream ends right after its
        #: acknowledgement, so the client opens it elsewhere.
        self._ending = False
        self._drained: asyncio.Event | None = None
        #: Other consumers of every change (the legacy sessions' fan-out); none on modern-only.
        self._listeners: list[Deliver] = []

    @property
    def started(self) -> bool:
        """Serving began (the event bus is connected or connecting)."""
        return self._started

    async def start(self) -> None:
        self._ending = False
        if not self._started:
            self._started = True
            self._loop = asyncio.get_running_loop()
            await self.bus.start(self.deliver_remote)

    async def stop(self) -> None:
        self.close_all()
        if self._started:
            self._started = False
            await self.bus.close()

    def deliver_remote(self, method: str, params: dict[str, Any] | None, uri: str | None) -> None:
        """A change made on another instance."""
        self._deliver(method, params, uri)
        for listener in self._listeners:
            listener(method, params, uri)

    def add_listener(self, listener: Deliver) -> None:
        """Hear every change, local or remote (as `(method, params, uri)`), on the event loop."""
        self._loop = asyncio.get_running_loop()
        self._listeners.append(listener)

    def remove_listener(self, listener: Deliver) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def __len__(self) -> int:
        return len(self._subs)

    def follows_tasks(self) -> bool:
        """Whether some open stream follows task statuses (`taskIds`, TASK-15)."""
        return any(sub.task_ids for sub in self._subs)

    def open(
        self,
        sub_id: str | int,
        requested: Any,
        supported: set[str],
        task_ids: list[str] | None = None,
    ) -> Subscription:
        """`task_ids`: the tasks (already checked as the caller's) to send status changes of."""
        if not isinstance(requested, dict):
            raise InvalidParams(
                'Invalid params: "notifications" must be an object (SubscriptionFilter)'
            )
        honoured: dict[str, Any] = {"taskIds": task_ids} if task_ids else {}
        for key, value in requested.items():
            if key in LIST_FILTERS and value is True and key in supported:
                honoured[key] = True
            elif key == "resourceSubscriptions" and key in supported:
                if not isinstance(value, list) or not all(isinstance(u, str) for u in value):
                    raise InvalidParams(
                        'Invalid params: "resourceSubscriptions" must be a list of URIs'
                    )
                if value:
                    honoured[key] = list(value)
        self._loop = asyncio.get_running_loop()
        sub = Subscription(sub_id, honoured, self._max_queue)
        if self._ending:
            sub.offer(_CLOSED)
            sub.closed = True
            return sub
        self._subs.add(sub)
        if self._drained is not None:
            self._drained.clear()
        return sub

    def close(self, sub: Subscription) -> None:
        sub.closed = True
        self._subs.discard(sub)
        if not self._subs and self._drained is not None:
            self._drained.set()

    async def drained(self) -> None:
        """Wait until no listen stream is open (for shutdown and observability)."""
        if not self._subs:
            return
        if self._drained is None:
            self._drained = asyncio.Event()
        await self._drained.wait()

    def publish(
        self, method: str, params: dict[str, Any] | None = None, uri: str | None = None
    ) -> None:
        loop = self._loop
        if loop is None:
            return
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is loop or not loop.is_running():
            # On the loop (any loop implementation: uvloop has no `_thread_id`): deliver now,
            # so the change is queued before the handler's own result goes out.
            self._publish(method, params, uri)
        else:
            loop.call_soon_threadsafe(self._publish, method, params, uri)

    def _publish(self, method: str, params: dict[str, Any] | None, uri: str | None) -> None:
        if self._started:
            self.bus.publish(method, params, uri)
        if self._subs:
            self._deliver(method, params, uri)
        for listener in self._listeners:
            listener(method, params, uri)

    def deliver_task(self, task: _Task) -> None:
        """A task changed (TASK-15): its DetailedTask to the streams that asked for it. Not
        through the event bus: a task store shared by several instances tells them itself."""
        if not self._subs:
            return
        params: dict[str, Any] | None = None
        for sub in list(self._subs):
            if task.id in sub.task_ids:
                params = params or task.detailed()
                sub.offer(sub.message(TASK_STATUS_NOTIFICATION, params))

    def _deliver(self, method: str, params: dict[str, Any] | None, uri: str | None) -> None:
        for sub in list(self._subs):
            if sub.wants(method, uri):
                sub.offer(sub.message(method, params))

    def close_all(self) -> None:
        """Server shutdown: every stream ends with its final result (new ones too)."""
        self._ending = True
        for sub in list(self._subs):
            sub.offer(_CLOSED)
            sub.closed = True
        self._subs.clear()
