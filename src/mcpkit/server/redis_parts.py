"""What several instances of one server must share, and moving it to Redis in one call.

    server.use_redis("redis://10.0.0.5:6379/0")     # or MCPKIT_REDIS_URL, mcpkit run --redis

The stateless 2026-07-28 wire lets any instance answer any request as long as these are shared:
change events (listen streams on every instance hear them), tasks (any instance answers
`tasks/*`), state handles (a handle made on one instance resolves on another) and, when they
are on, idempotency records and single-use `requestState`. `use_redis` replaces each part the server keeps in process by
its Redis counterpart, keeping its settings; parts given in code with another store stay.
Sealed `requestState` needs no store, only the same keys everywhere (`MCPKIT_STATE_KEYS`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .events import LocalEventBus
from .redis_config import RedisConfig, as_config
from .request_state import MemoryStateStore
from .tasks.store import TaskStore

if TYPE_CHECKING:
    from .server import Server

__all__ = ["unshared", "use_redis"]


def use_redis(server: Server, redis: RedisConfig | str) -> None:
    """See the module docstring (`Server.use_redis`)."""
    if server.subscriptions.started:
        raise RuntimeError("use_redis() comes before serving starts")
    config = as_config(redis)
    if isinstance(server.subscriptions.bus, LocalEventBus):
        from .redis_backend import RedisEventBus

        server.subscriptions.bus = RedisEventBus(config)
    if type(server.tasks) is TaskStore:
        from .tasks.redis_store import RedisTaskStore

        old = server.tasks
        server.set_task_store(
            RedisTaskStore(
                config,
                ttl_seconds=old.ttl_ms / 1000 if old.ttl_ms is not None else None,
                poll_interval_ms=old.poll_interval_ms,
                max_tasks=old.max_tasks,
                id_prefix=old.id_prefix,
            )
        )
    if isinstance(server.mrtr.store, MemoryStateStore):
        from .redis_backend import RedisStateStore

        server.mrtr.store = RedisStateStore(config)
    from .idempotency import MemoryIdempotencyStore

    if isinstance(server.idempotency, MemoryIdempotencyStore):
        from .redis_idempotency import RedisIdempotencyStore

        memory = server.idempotency
        server.set_idempotency(
            RedisIdempotencyStore(
                config,
                ttl_seconds=memory.ttl_seconds,
                max_running=memory.max_running,
                max_running_per_caller=memory.max_running_per_caller,
            )
        )
    from .handles import MemoryHandleStore

    if isinstance(server.handles.store, MemoryHandleStore):
        from .redis_handles import RedisHandleStore

        server.handles.store = RedisHandleStore(config)


def unshared(server: Server) -> list[str]:
    """The parts this server keeps in process memory that several processes serving it
    would not share (and need to): empty when nothing stands in the way."""
    parts = []
    if server.serves_tasks and type(server.tasks) is TaskStore:
        parts.append("tasks")
    if server.uses_handles:
        from .handles import MemoryHandleStore

        if isinstance(server.handles.store, MemoryHandleStore):
            parts.append("state handles")
    if isinstance(server.mrtr.store, MemoryStateStore):
        parts.append("single-use requestState")
    if server.idempotency is not None:
        from .idempotency import MemoryIdempotencyStore

        if isinstance(server.idempotency, MemoryIdempotencyStore):
            parts.append("idempotency records")
    return parts
