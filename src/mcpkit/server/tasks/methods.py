"""`tasks/get`, `tasks/update` and `tasks/cancel` (TASK-06, TASK-10, TASK-13, TASK-18)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...protocol.errors import InvalidParams, MethodNotFound, MissingRequiredClientCapability
from ...protocol.meta import RequestMeta
from ...protocol.tasks import REQUIRED_TASKS, declares_tasks
from ..inputs import parse_answer
from ..ownership import current_owner
from .store import TaskRecord

if TYPE_CHECKING:
    from ..admission import ServerRequest
    from ..methods import Handler
    from ..server import Server


def _record(server: Server, request: ServerRequest) -> TaskRecord:
    if not server.serves_tasks:
        raise MethodNotFound(f"Method not found: {request.method} (this server runs no tasks)")
    if not declares_tasks(request.meta.client_capabilities):
        raise MissingRequiredClientCapability(
            REQUIRED_TASKS,
            f"{request.method} needs the io.modelcontextprotocol/tasks extension in the "
            "request's client capabilities",
        )
    task_id = request.params["taskId"]  # a string (admitted)
    record = server.tasks.get(task_id, current_owner())
    if record is None:
        # Unknown, expired, or another caller's: the same answer for all three (TASK-19).
        raise InvalidParams(f"Task not found: {task_id}", {"taskId": task_id})
    return record


def listened_tasks(server: Server, wanted: Any, meta: RequestMeta) -> list[str]:
    """`subscriptions/listen` `taskIds` (TASK-15): the extension is required; of the ids asked
    for, only the caller's known tasks are honoured."""
    if not declares_tasks(meta.client_capabilities):
        raise MissingRequiredClientCapability(
            REQUIRED_TASKS, "taskIds needs the io.modelcontextprotocol/tasks extension"
        )
    if not isinstance(wanted, list) or not all(isinstance(t, str) for t in wanted):
        raise InvalidParams('Invalid params: "taskIds" must be a list of task ids')
    caller = current_owner()
    return [t for t in wanted if server.tasks.get(t, caller) is not None]


def _complete(server: Server, result: dict[str, Any]) -> dict[str, Any]:
    out = {"resultType": "complete", **result}  # TASK-06: "task" only on CreateTaskResult
    if server.result_meta is not None:
        out["_meta"] = server.result_meta
    return out


async def tasks_get(server: Server, request: ServerRequest) -> Any:
    return _complete(server, _record(server, request).detailed())


async def tasks_update(server: Server, request: ServerRequest) -> Any:
    record = _record(server, request)
    responses = request.params["inputResponses"]  # an object (admitted)
    # TASK-13: answers for keys not outstanding are ignored; the rest are checked like MRTR
    # answers (a malformed one is -32602 and nothing is taken), and may be partial.
    answers = {
        key: parse_answer(record.pending[key].call, raw)
        for key, raw in responses.items()
        if key in record.pending
    }
    if answers:
        record.answer(answers)
    return _complete(server, {})


async def tasks_cancel(server: Server, request: ServerRequest) -> Any:
    record = _record(server, request)
    # Cooperative (TASK-14): the handler sees CancelledError; the task settles `cancelled`
    # unless it finishes first. A terminal task is left as it is (the same empty ack).
    if record.runner is not None and not record.terminal:
        record.runner.cancel()
    return _complete(server, {})


METHODS: dict[str, Handler] = {
    "tasks/get": tasks_get,
    "tasks/update": tasks_update,
    "tasks/cancel": tasks_cancel,
}
