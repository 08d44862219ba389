"""Following a task to its end (the tasks extension on the client: TASK-04, 09, 11, 14).

A server that negotiated the extension may answer `tools/call` with a `CreateTaskResult`.
`Client.call_tool` then polls `tasks/get` at the pace the server suggests, answers the task's
`inputRequests` with the same handlers as MRTR (each key once: TASK-11), and returns the
task's final result as if the call had answered it directly; a failed task raises its
JSON-RPC error. Cancelling the call sends `tasks/cancel` (never `notifications/cancelled`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from ..protocol.errors import error_from_wire
from ..protocol.jsonrpc import JSONObject
from ..protocol.tasks import TERMINAL
from .errors import InvalidResponse, TaskCancelled

Send = Callable[[str, JSONObject], Awaitable[JSONObject]]
Fulfil = Callable[[JSONObject], Awaitable[JSONObject]]

#: Bounds on the server's `pollIntervalMs` (a missing one: 1 s).
MIN_POLL_S, MAX_POLL_S, DEFAULT_POLL_S = 0.01, 30.0, 1.0
_cancellations: set[asyncio.Task[Any]] = set()
#: Cancel a follower with this message to stop following without cancelling the task (a
#: host that closes keeps its background tasks for its next run: TASK-09).
KEEP_TASK = "mcpkit: stop following, keep the task"
#: Told the id of each task `follow_task` starts following, in the caller's context (a host
#: moves a call its server runs as a task to the background: `mcpkit.host.background`).
task_started: ContextVar[Callable[[str], None] | None] = ContextVar("task_started", default=None)


async def follow_task(created: JSONObject, send: Send, fulfil: Fulfil) -> JSONObject:
    """The final result of the task `created` announces."""
    task_id = created.get("taskId")
    if not isinstance(task_id, str):
        raise InvalidResponse("a CreateTaskResult without a taskId")
    told = task_started.get()
    if told is not None:
        told(task_id)
    answered: set[str] = set()
    task = created
    ended = False
    try:
        while True:
            status = task.get("status")
            ended = status in TERMINAL
            if status == "completed":
                result = task.get("result")
                if not isinstance(result, dict):
                    raise InvalidResponse(f"completed task {task_id} carries no result")
                return result
            if status == "failed":
                error = task.get("error")
                if not isinstance(error, dict):
                    raise InvalidResponse(f"failed task {task_id} carries no error")
                raise error_from_wire(error)
            if status == "cancelled":
                raise TaskCancelled(f"task {task_id} was cancelled", task_id=task_id)
            if status not in ("working", "input_required"):
                raise InvalidResponse(f"task {task_id} has an unknown status {status!r}")
            requests = task.get("inputRequests") if status == "input_required" else None
            fresh = (
                {k: v for k, v in requests.items() if k not in answered}
                if isinstance(requests, dict)
                else {}
            )
            if fresh:
                answers = await fulfil(fresh)
                answered.update(answers)
                await send("tasks/update", {"taskId": task_id, "inputResponses": answers})
            else:
                await asyncio.sleep(_poll_seconds(task))
            task = await send("tasks/get", {"taskId": task_id})
    except asyncio.CancelledError as exc:
        ended = ended or KEEP_TASK in exc.args
        raise
    finally:
        if not ended:  # the caller gave up, or the client failed: stop the work (TASK-14)
            _cancel_in_background(send, task_id)


def _poll_seconds(task: JSONObject) -> float:
    interval = task.get("pollIntervalMs")
    if type(interval) is not int or interval <= 0:
        return DEFAULT_POLL_S
    return min(max(interval / 1000, MIN_POLL_S), MAX_POLL_S)


def _cancel_in_background(send: Send, task_id: str) -> None:
    async def cancel() -> None:
        with contextlib.suppress(Exception):
            await send("tasks/cancel", {"taskId": task_id})

    job = asyncio.get_running_loop().create_task(cancel())
    _cancellations.add(job)
    job.add_done_callback(_cancellations.discard)
