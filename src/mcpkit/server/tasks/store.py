"""Task records and the in-process store that holds them (tasks extension, TASK-*).

A record is the durable half of a task: status, timestamps, the questions still open, the final
result or error. The running half is the handler's asyncio task, which the record owns.

`TaskStore` keeps tasks in the process that runs them; behind several instances, either route
`tasks/*` by `Mcp-Name` (the task id, TASK-16; give each instance its own `id_prefix`) or share
them through Redis (`RedisTaskStore`, any instance answers). Both offer the same async
operations, which is all `tasks/*`, the launcher and the server use: `new`, `describe`,
`update`, `cancel`, `drain`, `start` and `close`.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ...protocol.errors import InternalError, MCPError, ServerBusy, TaskLimitReached
from ...protocol.tasks import TERMINAL, TaskStatus, task_wire
from ..inputs import InputCall, parse_answer
from ..ownership import Owner, same_owner
from .expiry import ExpiryTimer
from .lapse import expired_error, stopped_error


class TaskView:
    """A task known by its wire form only (one running on another instance)."""

    __slots__ = ("_detailed", "id")

    def __init__(self, task_id: str, detailed: dict[str, Any]) -> None:
        self.id = task_id
        self._detailed = detailed

    def detailed(self) -> dict[str, Any]:
        return self._detailed


@dataclass(slots=True)
class PendingInput:
    """One question of the task's handler, waiting for `tasks/update`."""

    call: InputCall
    answer: asyncio.Future[Any]


class TaskRecord:
    """One task. Every change goes through a method here, which stamps `lastUpdatedAt` and
    tells the store (status notifications)."""

    __slots__ = (
        "_on_change",
        "created",
        "error",
        "expires",
        "id",
        "owner",
        "pending",
        "poll_interval_ms",
        "result",
        "runner",
        "status",
        "status_message",
        "stopped",
        "ttl_ms",
        "updated",
        "used_keys",
    )

    def __init__(
        self,
        task_id: str,
        owner: Owner,
        ttl_ms: int | None,
        poll_interval_ms: int | None,
        on_change: Callable[[TaskRecord], None],
    ) -> None:
        now = time.time()
        self.id = task_id
        self.owner = owner
        self.status: TaskStatus = "working"
        self.status_message: str | None = None
        self.created = self.updated = now
        self.ttl_ms = ttl_ms
        self.expires = now + ttl_ms / 1000 if ttl_ms is not None else None
        self.poll_interval_ms = poll_interval_ms
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        #: Questions not answered yet, by key; `used_keys`: every key ever asked (TASK-12).
        self.pending: dict[str, PendingInput] = {}
        self.used_keys: set[str] = set()
        self.runner: asyncio.Task[Any] | None = None
        #: Set when this instance stops the task itself (shutdown): it fails with this error.
        self.stopped: MCPError | None = None
        self._on_change = on_change

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    # -- the wire ----------------------------------------------------------------------------
    def task(self) -> dict[str, Any]:
        return task_wire(
            self.id,
            self.status,
            self.created,
            self.updated,
            self.ttl_ms,
            self.poll_interval_ms,
            self.status_message,
        )

    def detailed(self) -> dict[str, Any]:
        """The status-specific task of `tasks/get` and `notifications/tasks` (TASK-10)."""
        out = self.task()
        if self.status == "input_required":
            out["inputRequests"] = {k: p.call.request for k, p in self.pending.items()}
        elif self.status == "completed":
            out["result"] = self.result
        elif self.status == "failed":
            out["error"] = self.error
        return out

    # -- changes -----------------------------------------------------------------------------
    def _touch(self) -> None:
        self.updated = time.time()
        self._on_change(self)

    def set_message(self, message: str | None) -> None:
        if not self.terminal and message != self.status_message:
            self.status_message = message
            self._touch()

    def ask(self, calls: list[InputCall]) -> list[asyncio.Future[Any]]:
        """Park the task in `input_required` with these questions; their answers, to await."""
        loop = asyncio.get_running_loop()
        futures = []
        for call in calls:
            if call.key in self.used_keys:
                raise RuntimeError(
                    f"input key {call.key!r} was already asked in this task; keys are never "
                    "reused over a task's life (TASK-12)"
                )
            self.used_keys.add(call.key)
            pending = PendingInput(call, loop.create_future())
            self.pending[call.key] = pending
            futures.append(pending.answer)
        self.status = "input_required"
        self._touch()
        return futures

    def withdraw(self, calls: list[InputCall]) -> None:
        """The handler stopped waiting (cancelled): its questions are no longer outstanding."""
        for call in calls:
            self.pending.pop(call.key, None)
        if not self.pending and self.status == "input_required":
            self.status = "working"
            self._touch()

    def answer(self, answers: dict[str, Any]) -> None:
        """Deliver parsed answers for outstanding keys; `working` again once none is left."""
        for key, value in answers.items():
            pending = self.pending.pop(key)
            if not pending.answer.done():
                pending.answer.set_result(value)
        if not self.pending and self.status == "input_required":
            self.status = "working"
        self._touch()

    def stop(self, error: MCPError) -> None:
        """End a running task from this side (the instance is shutting down, its TTL ran
        out): it fails with `error`, not `cancelled`, which is the client's word."""
        if self.runner is not None and not self.terminal:
            self.stopped = error
            self.runner.cancel()

    def settle(self, runner: asyncio.Task[Any]) -> None:
        """The handler ended: completed, failed (a JSON-RPC error only, TASK-17) or cancelled."""
        self.pending.clear()
        if self.stopped is not None:
            self.status, self.error = "failed", self.stopped.to_wire()
            self.status_message = self.stopped.message
        elif runner.cancelled():
            self.status = "cancelled"
        else:
            exc = runner.exception()
            if exc is None:
                self.status, self.result = "completed", runner.result()
            else:
                error = exc if isinstance(exc, MCPError) else InternalError()
                self.status, self.error = "failed", error.to_wire()
                if self.status_message is None:
                    self.status_message = error.message
        self.runner = None
        self._touch()


class TaskStore:
    """Tasks of this process by id: unguessable ids (TASK-19), bound to the caller that made
    them (`ownership`), kept `ttl_seconds` from creation (then dropped on time, a running one
    failed: `expiry.py`), at most `max_tasks` at once (the oldest finished one makes room).

    `poll_interval_ms` is the polling pace suggested to clients (TASK-09)."""

    def __init__(
        self,
        *,
        ttl_seconds: float | None = 3600.0,
        poll_interval_ms: int | None = 1000,
        max_tasks: int = 10_000,
        id_prefix: str = "",
    ) -> None:
        if ttl_seconds is not None and ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive (or None for no limit)")
        self.ttl_ms = round(ttl_seconds * 1000) if ttl_seconds is not None else None
        self.poll_interval_ms = poll_interval_ms
        self.max_tasks = max_tasks
        self.id_prefix = id_prefix
        self._tasks: dict[str, TaskRecord] = {}
        #: Called on every change of any task (the server sends `notifications/tasks`): a
        #: `TaskRecord`, or a `TaskView` of a task changed on another instance.
        self.on_change: Callable[[TaskRecord | TaskView], None] = lambda record: None
        #: True once the server is shutting down: no new task starts here.
        self.draining = False
        #: Whether a listen stream of this server follows some task (the server sets it).
        self.following: Callable[[], bool] = lambda: False
        self._expiry = ExpiryTimer(self._expire)

    def __len__(self) -> int:
        return len(self._tasks)

    # -- the operations every store offers -------------------------------------------------------
    async def start(self) -> None:
        """Serving begins (a shared store connects and starts renewing its leases)."""
        self._arm()

    async def new(self, owner: Owner, status_message: str | None = None) -> TaskRecord:
        """A new task for `owner`, recorded before anyone hears of it (TASK-07)."""
        record = self.create(owner)
        record.status_message = status_message
        return record

    async def describe(self, task_id: Any, caller: Owner) -> dict[str, Any] | None:
        """The caller's task as `tasks/get` shows it (DetailedTask, TASK-10); None when it is
        unknown, expired or another caller's (TASK-19)."""
        record = self.get(task_id, caller)
        return record.detailed() if record is not None else None

    async def update(self, task_id: Any, caller: Owner, responses: dict[str, Any]) -> bool:
        """Answers for the task's outstanding questions (TASK-13): answers for keys not
        outstanding are ignored; a malformed one is -32602 and nothing is taken. False when
        the task is unknown to the caller."""
        record = self.get(task_id, caller)
        if record is None:
            return False
        answers = {
            key: parse_answer(record.pending[key].call, raw)
            for key, raw in responses.items()
            if key in record.pending
        }
        if answers:
            record.answer(answers)
        return True

    async def cancel(self, task_id: Any, caller: Owner) -> bool:
        """Ask the task's handler to stop (cooperative, TASK-14); a finished task is left as
        it is. False when the task is unknown to the caller."""
        record = self.get(task_id, caller)
        if record is None:
            return False
        if record.runner is not None and not record.terminal:
            record.runner.cancel()
        return True

    async def drain(self, timeout: float) -> None:
        """Shutting down: no new task starts; running ones get `timeout` seconds to finish,
        then fail with `stopped_error()` (not `cancelled`: the client did not ask)."""
        self.draining = True
        runners = [r.runner for r in self._tasks.values() if r.runner is not None]
        if runners and timeout > 0:
            await asyncio.wait(runners, timeout=timeout)
        await self.stop_running()

    async def stop_running(self, grace: float = 1.0) -> None:
        """Fail every task still running here with `stopped_error()`, and give the handlers
        `grace` seconds to unwind (their records settle as they do)."""
        stopped = []
        for record in list(self._tasks.values()):
            if record.runner is not None and not record.terminal:
                stopped.append(record.runner)
                record.stop(stopped_error())
        if stopped:
            await asyncio.wait(stopped, timeout=grace)

    async def close(self, grace: float = 1.0) -> None:
        """Serving ends: cancel every running task; their handlers get `grace` seconds to
        unwind, so none outlives the server."""
        runners = [r.runner for r in self._tasks.values() if r.runner is not None]
        self.cancel_all()
        if runners:
            await asyncio.wait(runners, timeout=grace)

    def refuse_if_draining(self) -> None:
        if self.draining:
            raise ServerBusy(
                "This server instance is shutting down and starts no new task; try again "
                "(another instance will take it)",
                retry_after=1,
            )

    @property
    def running(self) -> int:
        """Tasks whose handler runs in this process."""
        return sum(1 for r in self._tasks.values() if r.runner is not None and not r.terminal)

    # -- this process's records --------------------------------------------------------------
    def __iter__(self) -> Iterator[TaskRecord]:
        """Every task held, oldest first (for inspection; callers get theirs with `get`)."""
        return iter(list(self._tasks.values()))

    def count_by_status(self) -> dict[str, int]:  # for metrics
        counts: dict[str, int] = {}
        for record in list(self._tasks.values()):
            counts[record.status] = counts.get(record.status, 0) + 1
        return counts

    def create(self, owner: Owner) -> TaskRecord:
        self.purge()
        if len(self._tasks) >= self.max_tasks and not self._evict_finished():
            raise TaskLimitReached(
                f"Too many tasks in progress on this server (limit {self.max_tasks}); "
                "try again later"
            )
        task_id = self.id_prefix + secrets.token_urlsafe(18)
        record = TaskRecord(task_id, owner, self.ttl_ms, self.poll_interval_ms, self._changed)
        self._tasks[task_id] = record  # durable before anyone hears of it (TASK-07)
        self._arm()
        self.on_change(record)
        return record

    def get(self, task_id: Any, caller: Owner) -> TaskRecord | None:
        """The caller's task; another caller's task is as unknown as a missing one."""
        self.purge()
        record = self._tasks.get(task_id) if isinstance(task_id, str) else None
        if record is None or not same_owner(record.owner, caller):
            return None
        return record

    def purge(self) -> None:
        """Drop tasks past their TTL; one still running fails with `expired_error()`. Records
        are in creation order and share one TTL, so the expired ones are at the front."""
        if self.ttl_ms is None or not self._tasks:
            return
        now = time.time()
        while self._tasks:
            task_id, record = next(iter(self._tasks.items()))
            if record.expires is None or record.expires > now:
                return
            del self._tasks[task_id]
            record.stop(expired_error())

    @property
    def expiry_due(self) -> float | None:
        """When the expiry timer fires next (event loop time); None while none is set."""
        return self._expiry.due

    def _arm(self) -> None:
        if self._tasks:
            self._expiry.arm(next(iter(self._tasks.values())).expires)

    def _expire(self) -> None:
        """The timer: the oldest task's TTL ran out (nobody has to ask, `expiry.py`)."""
        self.purge()
        self._arm()

    def _evict_finished(self) -> bool:
        """At the cap, the oldest finished task makes room (its TTL allowed dropping it at any
        time after it ended); only a store full of running tasks refuses new ones."""
        for task_id, record in self._tasks.items():
            if record.terminal:
                del self._tasks[task_id]
                return True
        return False

    def cancel_all(self) -> None:
        """Server shutdown: stop every running task (and the expiry timer)."""
        self._expiry.disarm()
        for record in self._tasks.values():
            if record.runner is not None:
                record.runner.cancel()

    def _changed(self, record: TaskRecord) -> None:
        # Records hold this method, not `on_change` itself, so that replacing `on_change`
        # (the server does, after the store is made) reaches records already created.
        self.on_change(record)
