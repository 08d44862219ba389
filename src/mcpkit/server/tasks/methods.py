"""`tasks/get`, `tasks/update` and `tasks/cancel` (TASK-06, TASK-10, TASK-13, TASK-18)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...protocol.errors import InvalidParams, MethodNotFound, MissingRequiredClientCapability
from ...protocol.meta import RequestMeta
from ...protocol.tasks import REQUIRED_TASKS, declares_tasks
from ..ownership import current_owner

if TYPE_CHECKING:
    from ..admission import ServerRequest
    from ..methods import Handler
    from ..server import Server


def _task_id(server: Server, request: ServerRequest) -> str:
    if not server.serves_tasks:
        raise MethodNotFound(f"Method not found: {request.method} (this server runs no tasks)")
    if not declares_tasks(request.meta.client_capabilities):
        raise MissingRequiredClientCapability(
            REQUIRED_TASKS,
            f"{request.method} needs the io.modelcontextprotocol/tasks extension in the "
            "request's client capabilities",
        )
    return request.params["taskId"]  # type: ignore[no-any-return]  # a string (admitted)


def _not_found(task_id: str) -> InvalidParams:
    # Unknown, expired, or another caller's: the same answer for all three (TASK-19).
    return InvalidParams(f"Task not found: {task_id}", {"taskId": task_id})


async def listened_tasks(server: Server, wanted: Any, meta: RequestMeta) -> list[str]:
    """`subscriptions/listen` `taskIds` (TASK-15): the extension is required; of the ids asked
    for, only the caller's known tasks are honoured."""
    if not declares_tasks(meta.client_capabilities):
        raise MissingRequiredClientCapability(
            REQUIRED_TASKS, "taskIds needs the io.modelcontextprotocol/tasks extension"
        )
    if not isinstance(wanted, list) or not all(isinstance(t, str) for t in wanted):
        raise InvalidParams('Invalid params: "taskIds" must be a list of task ids')
    caller = current_owner()
    return [t for t in wanted if await server.tasks.describe(t, caller) is not None]


def _complete(server: Server, result: dict[str, Any]) -> dict[str, Any]:
    out = {"resultType": "complete", **result}  # TASK-06: "task" only on CreateTaskResult
    if server.result_meta is not None:
        out["_meta"] = server.result_meta
    return out


async def tasks_get(server: Server, request: ServerRequest) -> Any:
    task_id = _task_id(server, request)
    detailed = await server.tasks.describe(task_id, current_owner())
    if detailed is None:
        raise _not_found(task_id)
    return _complete(server, detailed)


async def tasks_update(server: Server, request: ServerRequest) -> Any:
    task_id = _task_id(server, request)
    responses = request.params["inputResponses"]  # an object (admitted)
    if not await server.tasks.update(task_id, current_owner(), responses):
        raise _not_found(task_id)
    return _complete(server, {})


async def tasks_cancel(server: Server, request: ServerRequest) -> Any:
    task_id = _task_id(server, request)
    # Cooperative (TASK-14): the handler sees CancelledError; the task settles `cancelled`
    # unless it finishes first. A terminal task is left as it is (the same empty ack).
    if not await server.tasks.cancel(task_id, current_owner()):
        raise _not_found(task_id)
    return _complete(server, {})


METHODS: dict[str, Handler] = {
    "tasks/get": tasks_get,
    "tasks/update": tasks_update,
    "tasks/cancel": tasks_cancel,
}
