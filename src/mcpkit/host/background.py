"""Background calls: a tool call its server runs as a task may be left running.

When a call the server answered with a task (the tasks extension) is still running `after`
seconds into the turn (`"host": {"background": {"after": 10}}`; 0: as soon as the task
exists), the model gets a handle at once and the turn goes on. The call stays on the one path
it started on (`host/pipeline/`): consent, pins and the hook ran before it was sent, and the
audit records its outcome when the task ends. Once in the background its deadline stops
counting: it runs until the task ends or is cancelled.

The result comes back as a message, once, at the model's next round (the next turn's first
round, or the next round of this one), marked as the result of that earlier call; the model
may also ask with the host tools `task_status` and `cancel_task` (`task_tools.py`). A task
that asks for input while in the background asks the user as any call does (TASK-11: the same
handlers, the same UI). Task ids are persisted (`background_store.py`, TASK-09): a host
started again lists them, and asking about one follows it again (`tasks/get`).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from ..client import CallResult
from ..client.tasks import KEEP_TASK, follow_task
from ..protocol.tasks import TASKS_EXTENSION
from .background_store import BackgroundSettings, TaskEntry, TaskFile
from .connections import Fleet
from .content import describe_block, result_blocks
from .conversation import ToolResult, UserMessage
from .events import BackgroundEnded, CallBackgrounded, EventBus
from .lazy import declared
from .pipeline import Call, Next, PendingCall
from .pipeline.present import error_result, tool_result
from .supervision import describe

#: Statuses of a task that has ended.
ENDED = ("completed", "failed", "cancelled")


@dataclass(eq=False)
class Running:
    """One background call: its persisted entry, the job following it, and how it ended."""

    entry: TaskEntry
    job: asyncio.Task[tuple[str, ToolResult]] | None = None
    #: `working` until it ends; `earlier` for a task of an earlier run not asked about yet.
    status: str = "working"
    result: ToolResult | None = None
    delivered: bool = False
    cancelling: bool = False

    def describe(self) -> dict[str, Any]:
        """What the UI shows of it."""
        e = self.entry
        return {"task": e.task_id, "server": e.server, "tool": e.tool, "alias": e.alias,
                "call": e.call_id, "arguments": e.arguments, "status": self.status,
                "started": e.started, "cancelling": self.cancelling}  # fmt: skip


def _text(call_id: str, text: str, *, error: bool = False) -> ToolResult:
    return ToolResult(call_id, [{"type": "text", "text": text}], is_error=error)


@dataclass(eq=False)
class BackgroundCalls:
    """One agent's background calls."""

    settings: BackgroundSettings
    fleet: Fleet
    bus: EventBus
    agent: str | None = None
    calls: dict[str, Running] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.file = TaskFile(self.settings.tasks, self.agent)
        for entry in self.file.load():
            self.calls[entry.task_id] = Running(entry, status="earlier")

    # -- a call ----------------------------------------------------------------------
    async def call(self, call: Call, run: Next) -> ToolResult:
        """`run(call)`'s result, or a handle when the server runs it as a task that is still
        going `after` seconds in."""
        after = self.settings.after
        if after is None:
            return tool_result(call.call_id, await run(call))
        tasks: list[str] = []
        created = asyncio.Event()

        def started(task_id: str) -> None:
            tasks.append(task_id)
            created.set()

        call.on_task = started
        job = asyncio.ensure_future(self._outcome(call, run))
        try:
            await asyncio.wait({job}, timeout=after)
            if not job.done():
                waiter = asyncio.ensure_future(created.wait())
                try:
                    await asyncio.wait({job, waiter}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
        except BaseException:
            job.cancel()
            raise
        if job.done():
            return job.result()[1]
        return self._leave(call, tasks[-1], job)

    async def _outcome(self, call: Call, run: Next) -> tuple[str, ToolResult]:
        outcome = await run(call)
        status = "completed" if outcome.raw is not None else "failed"
        return status, tool_result(call.call_id, outcome)

    def _leave(
        self, call: Call, task_id: str, job: asyncio.Task[tuple[str, ToolResult]]
    ) -> ToolResult:
        pending = call.pending()
        entry = TaskEntry(task_id, pending.server, call.alias, pending.tool, call.call_id,
                          call.arguments, self.agent)  # fmt: skip
        running = Running(entry, job)
        self.calls[task_id] = running
        self._save()
        clock = contextlib.ExitStack()
        if call.clock is not None:  # in the background, the deadline no longer counts
            clock.enter_context(call.clock.paused())

        def ended(job: asyncio.Future[Any]) -> None:
            clock.close()
            self._ended(running, pending, job)

        job.add_done_callback(ended)
        self.bus.publish(CallBackgrounded(pending, task_id))
        return _text(
            call.call_id,
            f"The call runs in the background as task {task_id}; the conversation goes on. "
            "Its result will come as a message when the task ends; ask with task_status, "
            "stop it with cancel_task.",
        )

    def _ended(self, running: Running, pending: PendingCall, job: asyncio.Future[Any]) -> None:
        call_id = running.entry.call_id
        if job.cancelled():
            with contextlib.suppress(asyncio.CancelledError):
                job.result()
            return  # the host closed: the task stays persisted for its next run
        exc = job.exception()
        if exc is not None:
            status, result = "failed", error_result(call_id, f"The call failed: {describe(exc)}")
        else:
            status, result = job.result()
        if running.cancelling and status == "failed":
            status = "cancelled"
        running.status, running.result = status, result
        self.bus.publish(BackgroundEnded(pending, running.entry.task_id, status, result))

    # -- the conversation -------------------------------------------------------------
    def arrived(self) -> list[UserMessage]:
        """Results of background calls that ended since the model last saw them (once)."""
        out = []
        for running in self.calls.values():
            if running.result is not None and not running.delivered:
                running.delivered = True
                out.append(UserMessage(delivery(running, running.result)))
        if out:
            self._save()
        return out

    def could_run(self) -> bool:
        """Background calls could happen in this conversation: they are on and a server runs
        tasks, or tasks are kept from an earlier run (task_status and cancel_task are then
        offered from the first round)."""
        if self.listed():
            return True
        if self.settings.after is None:
            return False
        links = self.fleet.links.values()
        return any(TASKS_EXTENSION in (declared(link).get("extensions") or {}) for link in links)

    def listed(self) -> list[Running]:
        """The calls the model or the user may still ask about."""
        return [r for r in self.calls.values() if not r.delivered]

    def _save(self) -> None:
        self.file.save([r.entry for r in self.calls.values() if not r.delivered])

    # -- asking about a task ---------------------------------------------------------
    async def status(self, task_id: str) -> tuple[str, ToolResult | None]:
        """The task's status, and its result once it ended (then it is delivered)."""
        running = self.calls.get(task_id)
        if running is None:
            raise LookupError(f"no background task {task_id!r} (task_status lists them)")
        if running.status == "earlier":
            await self._ask_again(running)
        if running.result is not None and not running.delivered:
            running.delivered = True
            self._save()
            return running.status, running.result
        return running.status, None

    async def _ask_again(self, running: Running) -> None:
        """A task from an earlier run: `tasks/get`; one still running is followed again."""
        client, task_id = self._client(running), running.entry.task_id
        task = await client.request("tasks/get", {"taskId": task_id}, use_cache=False)
        status = str(task.get("status"))
        if status not in ENDED:
            running.status = "working"

            async def follow() -> tuple[str, ToolResult]:
                raw = await follow_task(
                    task,
                    lambda method, params: client.request(method, params, use_cache=False),
                    client.handlers.fulfil,
                )
                return "completed", _result(running.entry.call_id, raw)

            pending = PendingCall(running.entry.alias, running.entry.server, running.entry.tool,
                                  running.entry.arguments, {}, False, running.entry.call_id)  # fmt: skip
            running.job = asyncio.ensure_future(follow())
            running.job.add_done_callback(lambda j: self._ended(running, pending, j))
            return
        call_id = running.entry.call_id
        running.status = status
        if status == "completed" and isinstance(task.get("result"), dict):
            running.result = _result(call_id, task["result"])
        else:
            error = task.get("error") if isinstance(task.get("error"), dict) else {}
            running.result = _text(
                call_id, f"The task {status}: {error.get('message', status)}", error=True
            )

    async def cancel(self, task_id: str) -> str:
        """Ask the task's server to cancel it (`tasks/cancel`, TASK-14); the line to show."""
        running = self.calls.get(task_id)
        if running is None:
            raise LookupError(f"no background task {task_id!r}")
        if running.result is not None:
            return f"Task {task_id} has already ended ({running.status})."
        running.cancelling = True
        await self._client(running).request("tasks/cancel", {"taskId": task_id}, use_cache=False)
        if running.job is None:  # an earlier run's task nobody follows: done with it
            running.status, running.delivered = "cancelled", True
            self._save()
        return f"Asked the server to cancel task {task_id}; its end comes as its result."

    def _client(self, running: Running) -> Any:
        link = self.fleet.links.get(running.entry.server)
        if link is None or link.client is None:
            raise LookupError(f"the server {running.entry.server!r} is not connected")
        return link.client

    async def close(self) -> None:
        """Stop following the tasks, keeping them for the next run (TASK-09)."""
        jobs = [r.job for r in self.calls.values() if r.job is not None and not r.job.done()]
        for job in jobs:
            job.cancel(KEEP_TASK)
        await asyncio.gather(*jobs, return_exceptions=True)


def _result(call_id: str, raw: dict[str, Any]) -> ToolResult:
    result = CallResult.from_wire(raw, None)
    return ToolResult(call_id, result_blocks(raw), result.is_error, [], raw)


def delivery(running: Running, result: ToolResult) -> str:
    """The message that brings a background call's result to the model (once)."""
    e = running.entry
    body = "\n".join(describe_block(b) for b in result.content)
    return (
        f"[Background call ended] Your earlier call {e.alias} (call id {e.call_id}, task "
        f"{e.task_id}) ran in the background and has {running.status}"
        f"{' with an error' if result.is_error and running.status == 'completed' else ''}. "
        f"Its result:\n{body}"
    )
