"""What a server needs to run as one of several instances: where its tasks live, the modern
wire only (for `mcpkit run --workers`), idempotency keys with the keyed calls running detached
from their requests, and a drain before it stops. `Server`'s base, beside
`Registrations`; `Server.use_redis` moves the shared parts to Redis."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, cast

from . import methods

if TYPE_CHECKING:
    from .detached import DetachedCalls
    from .idempotency import IdempotencyStore
    from .readiness import Readiness
    from .redis_config import RedisConfig
    from .server import Server
    from .subscriptions import SubscriptionHub
    from .tasks import TaskStore


class Scaling:
    """Tasks' store, the legacy wire's refusal, idempotency keys and the drain of a server."""

    tasks: TaskStore
    subscriptions: SubscriptionHub
    readiness: Readiness
    legacy: bool
    supported_versions: tuple[str, ...]
    advertised_versions: tuple[str, ...]
    legacy_refusal: str | None
    #: The keyed calls running detached from their requests (idempotency on), else None.
    detached: DetachedCalls | None = None
    idempotency: IdempotencyStore | None
    idempotency_settings: dict[str, Any] | None
    _methods: dict[str, Any]

    def set_idempotency(self, store: IdempotencyStore) -> None:
        """Honour idempotency keys on `tools/call`, records in `store` (before serving)."""
        from .idempotency import DetachedCalls, guard, settings  # loaded only if used

        self.idempotency = store
        self.detached = DetachedCalls(store.max_running, store.max_running_per_caller)
        self._methods["tools/call"] = guard(store, methods.tools_call, self.detached)
        self.idempotency_settings = settings(store)

    def use_redis(self, redis: RedisConfig | str) -> None:
        """Share every part several instances must share through this Redis: change events,
        tasks, state handles, single-use requestState (see `mcpkit.server.redis_parts`).
        Before serving starts; `MCPKIT_REDIS_URL` does it for `serve_http`."""
        from .redis_parts import use_redis

        use_redis(cast("Server", self), redis)

    def set_task_store(self, store: TaskStore) -> None:
        """Keep tasks in `store` (before serving starts)."""
        self.tasks = store
        store.on_change = self.subscriptions.deliver_task
        store.following = self.subscriptions.follows_tasks

    def refuse_legacy(self, reason: str) -> None:
        """Serve the modern wire only from now on (before serving starts): `initialize` gets
        -32022 naming the versions served (VER-12), with `reason`."""
        self.legacy = False
        self.advertised_versions = self.supported_versions
        self.legacy_refusal = reason

    @property
    def draining(self) -> bool:
        """True once `drain()` began: the instance is on its way out (not ready)."""
        return self.tasks.draining

    async def drain(self, timeout: float) -> None:
        """Prepare to stop without losing what was promised: listen streams end with their
        result (SUB-11) and new ones end at once, so clients open them elsewhere; no new task
        starts here; running tasks get `timeout` seconds to finish, then fail with a reason
        (TASK-17). Requests in flight are the transport's to finish (`serve_http` does)."""
        self.readiness.drain()  # /readyz 503 from now on
        self.tasks.draining = True
        self.subscriptions.close_all()
        # Keyed calls as well as tasks: their outcome is promised to a re-send.
        await asyncio.gather(self.tasks.drain(timeout), self.settle_detached(timeout))

    async def settle_detached(self, timeout: float) -> None:
        """Give keyed calls still running up to `timeout` seconds to reach their outcome."""
        if self.detached is not None:
            await self.detached.settle(timeout)

    async def stop_detached(self) -> int:
        """Serving ends: keyed calls still running are stopped, each leaving "outcome
        unknown" under its key (for the memory store, until the process exits); how many."""
        return 0 if self.detached is None else await self.detached.stop()
