"""Running a tool call as a task: when it becomes one, and how its handler asks for input.

A tool registered with `task="optional"` or `task="required"` becomes a task when the request
declared the extension (TASK-01/03):

* `task_start="call"` (default): at once; the handler runs in the background from its first
  line and the request answers `CreateTaskResult`.
* `task_start="handler"`: the handler starts inside the request, where `ctx.elicit(...)` is
  multi round-trip input as usual (TASK-08: input before the task is settled synchronously),
  and becomes a task when it awaits `ctx.run_as_task()`. A handler that returns before that
  answers with its plain result.

Once a task, the handler's questions park it in `input_required` and are answered through
`tasks/update`; progress and log notifications are not sent (there is no request stream).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ...protocol.errors import MissingRequiredClientCapability
from ...protocol.tasks import REQUIRED_TASKS
from ..inputs import InputCall, check_capability
from ..ownership import current_owner
from .store import TaskRecord, TaskStore

if TYPE_CHECKING:
    from ..context import Context
    from ..tools import Tool


class TaskInputs:
    """The input channel of a running task: questions wait for `tasks/update` (TASK-11)."""

    def __init__(self, record: TaskRecord, ctx: Context) -> None:
        self.record = record
        self.meta = ctx.meta
        self.state: dict[str, Any] | None = ctx.state  # what earlier rounds carried (or {})

    #: Tasks are the stateless wire's: no session.
    session_id: None = None

    async def resolve(self, calls: list[InputCall]) -> list[Any]:
        for call in calls:
            check_capability(self.meta, call)  # the creating request's capabilities
        futures = self.record.ask(calls)
        try:
            return list(await asyncio.gather(*futures))
        finally:
            if not all(f.done() for f in futures):
                self.record.withdraw(calls)


class Launcher:
    """Turns one call into a task, once: creates the record and switches the handler's context
    to it. The request waits on `detached` (or on the handler finishing first)."""

    def __init__(self, store: TaskStore) -> None:
        self.store = store
        self.record: TaskRecord | None = None
        #: The CreateTaskResult: the task's seed state, as it was when it was created.
        self.created: dict[str, Any] = {}
        self.detached: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def detach(self, ctx: Context, status_message: str | None) -> TaskRecord:
        self.store.refuse_if_draining()
        record = await self.store.new(current_owner(), status_message)
        ctx.become_task(record, TaskInputs(record, ctx))
        self.record = record
        self.created = {"resultType": "task", **record.task()}  # TASK-06, flat (no `task`)
        if not self.detached.done():
            self.detached.set_result(None)
        return record


def require_tasks(tool: Tool) -> None:
    """TASK-05: a tool that only runs as a task, asked by a request without the extension."""
    raise MissingRequiredClientCapability(
        REQUIRED_TASKS,
        f"Tool '{tool.name}' runs only as a task: declare the io.modelcontextprotocol/tasks "
        "extension in the request's client capabilities",
    )


def task_runner(
    store: TaskStore, tool: Tool, arguments: dict[str, Any]
) -> Callable[[Context | None], Awaitable[dict[str, Any]]]:
    """The `run` step of a negotiated task-capable `tools/call`: its result is either the tool's
    own result (the handler finished first) or a `CreateTaskResult`."""

    async def run(ctx: Context | None) -> dict[str, Any]:
        assert ctx is not None
        launcher = Launcher(store)
        if tool.task_start == "call":
            await launcher.detach(ctx, None)
        else:
            ctx.offer_task(launcher)
        work = asyncio.get_running_loop().create_task(tool.call(arguments, ctx))
        if launcher.record is None:
            try:
                await asyncio.wait((work, launcher.detached), return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                work.cancel()  # the request went away before there was a task
                raise
            if launcher.record is None:
                ctx.offer_task(None)
                return work.result()  # InputRequired (MRTR) and MCPError propagate
        record = launcher.record
        record.runner = work
        work.add_done_callback(record.settle)
        return launcher.created

    return run
