"""`RedisTaskStore`: tasks shared by every instance of a server through Redis.

    redis = RedisConfig("redis://10.0.0.5:6379/0", prefix="shop:")
    server = Server("shop", tasks=RedisTaskStore(redis), event_bus=RedisEventBus(redis))

Any instance answers `tasks/get`, `tasks/update` and `tasks/cancel` for any task. The handler
runs where the task was created: that instance writes each change of the task to Redis and
holds a lease on it, renewed every third of `lease_seconds`. Another instance reaches the
handler through Redis: a cancel sets a flag, answers wait in the task's inbox, and a message
on the tasks' own event stream wakes the running instance at once (its next renewal would find
them anyway). Status changes reach listen streams on every instance the same way (TASK-15).

If the running instance dies, its lease lapses, and the first instance to look at the task
(a `tasks/get`, a listen stream following it, its periodic sweep) marks it `failed` with a
JSON-RPC error saying so (TASK-17): a task is never left `working`. An instance that shuts
down gracefully fails its unfinished tasks itself (`drain`). Finished tasks stay readable
for their TTL, from any instance.

Redis must keep what it is given for this to hold across a Redis restart: run it with AOF
(`appendonly yes`). Without persistence a restart forgets every task; a running instance
writes its own tasks again at its next renewal, other tasks are unknown (-32602).

Requests that need Redis while it cannot be reached are answered `StoreUnavailable`
(-31004, HTTP 503 with `Retry-After`): nothing was done; the same request may be sent again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import orjson

from ...protocol.errors import InternalError, InvalidParams
from ...protocol.tasks import TERMINAL
from ..inputs import call_from_wire, parse_answer
from ..ownership import Owner, same_owner
from ..redis_config import RedisConfig, as_config, unavailable, unreachable, until_queued
from . import redis_scripts as lua
from .lapse import failed_view, lapsed_error
from .store import TaskRecord, TaskStore, TaskView

__all__ = ["RedisTaskStore"]

log = logging.getLogger("mcpkit.server")
T = TypeVar("T")

_UNREACHABLE = unreachable()


class RedisTaskStore(TaskStore):
    """Tasks in Redis, answered by any instance (see the module docstring). `lease_seconds`:
    how long a task outlives its instance in `working` (and the longest Redis outage a
    running task rides through). The other options are `TaskStore`'s; `max_tasks` bounds
    the tasks running on this instance."""

    def __init__(
        self,
        redis: RedisConfig | str | None = None,
        *,
        ttl_seconds: float | None = 3600.0,
        poll_interval_ms: int | None = 1000,
        max_tasks: int = 10_000,
        lease_seconds: float = 30.0,
        id_prefix: str = "",
    ) -> None:
        super().__init__(
            ttl_seconds=ttl_seconds,
            poll_interval_ms=poll_interval_ms,
            max_tasks=max_tasks,
            id_prefix=id_prefix,
        )
        if lease_seconds <= 0:
            raise ValueError("lease_seconds must be positive")
        self.redis = as_config(redis)
        self.lease_ms = round(lease_seconds * 1000)
        #: This instance, as the `i` field of the tasks it runs and on the tasks' event stream.
        self.instance = uuid.uuid4().hex
        self._leases = self.redis.key("task-leases")
        self._key_prefix = self.redis.key("task") + ":"
        self._scripts: dict[str, Any] = {}
        #: Tasks of this instance whose latest state is not in Redis yet (the writer's queue).
        self._dirty: dict[str, TaskRecord] = {}
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._loops: list[asyncio.Task[None]] = []
        self._bus: Any = None
        self._starting: asyncio.Future[None] | None = None
        self._jobs: set[asyncio.Task[None]] = set()
        #: Until when (loop time) this instance sweeps lapsed leases for tasks it looked at.
        self._looked_until = 0.0

    # -- keys and scripts ---------------------------------------------------------------------
    def _key(self, task_id: str) -> str:
        return self._key_prefix + task_id

    def _inbox(self, task_id: str) -> str:
        return self.redis.key("task-inbox", task_id)

    def _script(self, name: str) -> Any:
        script = self._scripts.get(name)
        if script is None:
            script = self._scripts[name] = self.redis.client().register_script(getattr(lua, name))
        return script

    async def _run(self, name: str, keys: list[str], args: list[Any]) -> Any:
        return await self._script(name)(keys=keys, args=args)

    async def _reach(self, call: Callable[[], Awaitable[T]]) -> T:
        """One request's Redis work; unreachable Redis → StoreUnavailable (503, retry)."""
        try:
            return await call()
        except _UNREACHABLE as exc:
            log.warning("task store: redis unavailable (%s)", exc)
            raise unavailable("The task store") from None

    # -- lifecycle ----------------------------------------------------------------------------
    async def start(self) -> None:
        """Serving begins: the tasks' event stream, the writer and the lease keeper start. An
        instance sends Redis commands for tasks only while it runs or follows some: a server
        whose clients never use tasks costs Redis nothing but the stream's subscription."""
        await self._running()

    async def _running(self) -> None:
        """Start the writer, the lease keeper and the tasks' event stream (once)."""
        if self._starting is None:
            self._starting = asyncio.get_running_loop().create_future()
            try:
                await self._start_loops()
            finally:
                self._starting.set_result(None)
        await asyncio.shield(self._starting)

    async def _start_loops(self) -> None:
        from ..redis_backend import RedisEventBus

        loop = asyncio.get_running_loop()
        self._loops = [
            loop.create_task(self._write(), name="mcpkit-tasks-write"),
            loop.create_task(self._keep(), name="mcpkit-tasks-lease"),
        ]
        # The bus heals after a Redis outage on its own; news missed meanwhile is found at the
        # next renewal (cancels, answers) or the next look (statuses).
        self._bus = RedisEventBus(self.redis, channel=self.redis.key("task-events"))
        await self._bus.start(self._heard)

    async def close(self, grace: float = 1.0) -> None:
        """Serving ends: tasks still running here fail (their instance is going), what is
        known reaches Redis if it can within a few seconds, and the loops stop."""
        self.draining = True
        self._expiry.disarm()
        await self.stop_running(grace)
        await self._flush(min(5.0, self.redis.socket_timeout))
        loops, self._loops = self._loops, []
        for task in loops:
            task.cancel()
        await asyncio.gather(*loops, return_exceptions=True)
        if self._bus is not None:
            bus, self._bus = self._bus, None
            await bus.close()
        self._starting = None

    async def drain(self, timeout: float) -> None:
        await super().drain(timeout)
        await self._flush(min(5.0, self.redis.socket_timeout))

    async def _flush(self, timeout: float) -> None:
        if not self._loops:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout)

    # -- the operations -----------------------------------------------------------------------
    async def new(self, owner: Owner, status_message: str | None = None) -> TaskRecord:
        await self._running()
        record = self.create(owner)
        record.status_message = status_message
        self._dirty.pop(record.id, None)  # written here, before anyone hears of it (TASK-07)
        try:
            await self._reach(lambda: self._save(record))
        except BaseException:
            self._tasks.pop(record.id, None)
            raise
        return record

    async def describe(self, task_id: Any, caller: Owner) -> dict[str, Any] | None:
        record = self.get(task_id, caller)
        if record is not None:
            return record.detailed()
        if not isinstance(task_id, str):
            return None
        found = await self._reach(lambda: self._look(task_id))
        if found is None or not same_owner(found[0], caller):
            return None
        if found[1]["status"] not in TERMINAL:
            await self._running()  # followed from here: the sweep and the event stream
            self._looked_until = asyncio.get_running_loop().time() + 2 * self.lease_ms / 1000
        return found[1]

    async def update(self, task_id: Any, caller: Owner, responses: dict[str, Any]) -> bool:
        if self.get(task_id, caller) is not None:
            return await super().update(task_id, caller, responses)
        detailed = await self.describe(task_id, caller)
        if detailed is None:
            return False
        if detailed["status"] in TERMINAL:
            return True  # nothing outstanding: answers are ignored (TASK-13)
        # `working` in Redis: the task may have asked already (its instance answered the
        # client's tasks/get before writing the question here); its instance checks them.
        asked = detailed.get("inputRequests") if detailed["status"] == "input_required" else None
        taken: dict[str, Any] = {}
        for key, raw in responses.items():
            call = call_from_wire(key, asked.get(key)) if isinstance(asked, dict) else None
            if call is not None:
                parse_answer(call, raw)  # malformed → -32602, nothing taken
            if call is not None or not isinstance(asked, dict):
                taken[key] = raw
        if taken:
            data = orjson.dumps(taken)
            keys = [self._key(task_id), self._inbox(task_id)]
            if await self._reach(lambda: self._run("PUSH", keys, [data])):
                self._tell("input", task_id)
        return True

    async def cancel(self, task_id: Any, caller: Owner) -> bool:
        if self.get(task_id, caller) is not None:
            return await super().cancel(task_id, caller)
        detailed = await self.describe(task_id, caller)
        if detailed is None:
            return False
        if detailed["status"] not in TERMINAL:
            done = await self._reach(lambda: self._run("CANCEL", [self._key(task_id)], []))
            if done == 1:
                self._tell("cancel", task_id)
        return True

    # -- reading ------------------------------------------------------------------------------
    async def _look(self, task_id: str) -> tuple[Owner, dict[str, Any]] | None:
        """(owner, DetailedTask) as Redis has it; a task whose lease lapsed is failed first."""
        for _ in range(3):
            found = await self._run("LOOK", [self._key(task_id), self._leases], [task_id])
            if found is None:
                return None
            _status, data, owner, live = found
            detailed = orjson.loads(data)
            if live:
                return orjson.loads(owner), detailed
            failed = failed_view(detailed, lapsed_error())
            if await self._run(
                "FAIL", [self._key(task_id), self._leases], [task_id, orjson.dumps(failed)]
            ):
                self._tell("status", task_id, failed)
                self.on_change(TaskView(task_id, failed))
                return orjson.loads(owner), failed
        raise InternalError(f"task {task_id} keeps changing; try again")

    # -- writing (the instance running the task) ----------------------------------------------
    def _changed(self, record: TaskRecord) -> None:
        self.on_change(record)
        if self._tasks.get(record.id) is record:
            self._dirty[record.id] = record
            self._idle.clear()
            self._wake.set()

    async def _save(self, record: TaskRecord) -> dict[str, Any] | None:
        """Write the record; its DetailedTask, or None when the task already ended elsewhere."""
        detailed = record.detailed()
        expires = round(record.expires * 1000) if record.expires is not None else 0
        args = [
            record.id,
            record.status,
            orjson.dumps(detailed),
            orjson.dumps(record.owner),
            expires,
            self.lease_ms,
            1 if record.terminal else 0,
            self.instance,
        ]
        saved = await self._run("SAVE", [self._key(record.id), self._leases], args)
        return detailed if saved else None

    async def _write(self) -> None:
        """Write changed tasks in order, each at its latest state; retry while Redis is away."""
        attempt = 0
        while True:
            await until_queued(self._dirty, self._idle, self._wake)
            task_id = next(iter(self._dirty))
            record = self._dirty.pop(task_id)
            try:
                detailed = await self._save(record)
            except _UNREACHABLE:
                self._dirty.setdefault(task_id, record)
                await asyncio.sleep(self.redis.backoff(attempt))
                attempt += 1
                continue
            attempt = 0
            if detailed is None:
                self._lost(record)
                continue
            self._tell("status", task_id, detailed)
            if record.terminal and task_id not in self._dirty:
                self._tasks.pop(task_id, None)  # from now on, read from Redis like any other

    def _lost(self, record: TaskRecord) -> None:
        """The task ended elsewhere (its lease lapsed while this instance could not renew it):
        Redis has the last word; the handler stops."""
        if self._tasks.get(record.id) is record:
            del self._tasks[record.id]
            log.warning("task %s: its lease lapsed while it ran here; it stops", record.id)
        if record.runner is not None:
            record.runner.cancel()

    async def _keep(self) -> None:
        """Every third of the lease: renew the leases of the tasks running here, take what
        other instances left for them, and fail lapsed tasks (of dead instances)."""
        period = self.lease_ms / 3000
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(period)
            if not self._tasks and self._looked_until < loop.time() and not self.following():
                continue  # nothing here runs or follows a task: nothing to ask Redis
            try:
                await self._renew()
                for task_id in await self._run("SWEEP", [self._leases], [self._key_prefix, 20]):
                    await self._look(task_id.decode())
            except _UNREACHABLE as exc:
                log.debug("task store: renewal postponed (%s)", exc)

    async def _renew(self) -> None:
        running = [r for r in self._tasks.values() if not r.terminal]
        if not running:
            return
        script = self._script("RENEW")
        async with self.redis.client().pipeline(transaction=False) as pipe:
            for record in running:
                keys = [self._key(record.id), self._leases, self._inbox(record.id)]
                await script(keys=keys, args=[record.id, self.lease_ms], client=pipe)
            replies = await pipe.execute()
        for record, reply in zip(running, replies, strict=True):
            if reply[0] == -1:  # Redis forgot it (restarted without persistence): write it
                self._changed(record)
            elif reply[0] == 0:
                self._lost(record)
            else:
                await self._take(record, reply[2])
                if reply[1] and record.runner is not None and not record.terminal:
                    record.runner.cancel()

    async def _take(self, record: TaskRecord, inbox: list[bytes]) -> None:
        """Answers another instance checked and left for this task (TASK-13), removed from
        the inbox once applied (not before: a Redis restart could lose them in between)."""
        for item in inbox:
            answers = {}
            for key, raw in orjson.loads(item).items():
                pending = record.pending.get(key)
                if pending is not None:
                    with contextlib.suppress(InvalidParams):
                        answers[key] = parse_answer(pending.call, raw)
            if answers:
                record.answer(answers)
        if inbox:
            with contextlib.suppress(*_UNREACHABLE):  # still there: taken again, then ignored
                await self._run("ACK", [self._inbox(record.id)], inbox)

    # -- the tasks' event stream --------------------------------------------------------------
    def _tell(self, kind: str, task_id: str, detailed: dict[str, Any] | None = None) -> None:
        if self._bus is not None:
            self._bus.publish(kind, {"id": task_id, "d": detailed}, None)

    def _heard(self, kind: str, params: dict[str, Any] | None, _uri: str | None) -> None:
        """Another instance's news: a status (for listen streams here), or a cancel or answers
        for a task running here."""
        task_id = params.get("id") if isinstance(params, dict) else None
        if not isinstance(task_id, str):
            return
        if kind == "status" and isinstance(params, dict) and isinstance(params.get("d"), dict):
            self.on_change(TaskView(task_id, params["d"]))
            return
        record = self._tasks.get(task_id)
        if record is None or record.terminal:
            return
        if kind == "cancel" and record.runner is not None:
            record.runner.cancel()
        elif kind == "input":
            job = asyncio.get_running_loop().create_task(self._take_now(record))
            self._jobs.add(job)
            job.add_done_callback(self._jobs.discard)

    async def _take_now(self, record: TaskRecord) -> None:
        with contextlib.suppress(*_UNREACHABLE):  # the next renewal takes them then
            await self._take(record, await self._run("TAKE", [self._inbox(record.id)], []))
