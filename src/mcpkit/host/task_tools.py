"""The host tools for background calls (`background.py`), offered from the first round when
there could be some (`BackgroundCalls.could_run`):

- `task_status(task)`: a background task's status, and its result once it has ended (which
  is then not delivered again); without `task`, the list of them;
- `cancel_task(task)`: ask the task's server to cancel it (`tasks/cancel`, TASK-14).
"""

from __future__ import annotations

from typing import Any

from ..client import ClientError
from ..protocol.errors import MCPError
from .background import BackgroundCalls
from .conversation import ToolCall, ToolResult, ToolSpec

TASK_STATUS = "task_status"
CANCEL_TASK = "cancel_task"
NAMES = (TASK_STATUS, CANCEL_TASK)

_TASK = {"task": {"type": "string", "description": "The task id the call's handle named."}}
TASK_STATUS_SPEC = ToolSpec(
    TASK_STATUS,
    "The status of a tool call running in the background, and its result once it has ended. "
    "Without a task id: the background tasks there are.",
    {"type": "object", "properties": _TASK, "required": [], "additionalProperties": False},
)
CANCEL_TASK_SPEC = ToolSpec(
    CANCEL_TASK,
    "Stop a tool call running in the background, by the task id its handle named.",
    {"type": "object", "properties": _TASK, "required": ["task"], "additionalProperties": False},
)


def _text(call: ToolCall, text: str, *, error: bool = False) -> ToolResult:
    return ToolResult(call.id, [{"type": "text", "text": text}], is_error=error)


async def run(background: BackgroundCalls, call: ToolCall) -> ToolResult:
    task: Any = call.arguments.get("task")
    if task is not None and not isinstance(task, str):
        return _text(call, f"{call.name} needs a task id (a string).", error=True)
    try:
        if call.name == CANCEL_TASK:
            if task is None:
                return _text(call, "cancel_task needs the task id.", error=True)
            return _text(call, await background.cancel(task))
        if task is None:
            return _text(call, listing(background))
        status, result = await background.status(task)
    except LookupError as exc:
        return _text(call, str(exc.args[0]), error=True)
    except (MCPError, ClientError) as exc:
        return _text(call, f"The server could not say: {exc}", error=True)
    if result is None:
        return _text(call, f"Task {task} is {_said(status)}.")
    head = {"type": "text", "text": f"Task {task} has {status}. Its result:"}
    return ToolResult(call.id, [head, *result.content], result.is_error)


def _said(status: str) -> str:
    return {"working": "still running", "earlier": "from an earlier run (ask about it)"}.get(
        status, status
    )


def listing(background: BackgroundCalls) -> str:
    rows = background.listed()
    if not rows:
        return "No background tasks."
    lines = [f"- {r.entry.task_id}: {r.entry.alias} ({_said(r.status)})" for r in rows]
    return "Background tasks:\n" + "\n".join(lines)
