"""The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663; CHECKLIST TASK-*). No I/O.

A server may answer a `tools/call` with a `CreateTaskResult` (`resultType: "task"`) instead of
the tool's result; the client then polls `tasks/get`, answers input through `tasks/update` and
may `tasks/cancel`. This module holds the names, the statuses and the wire shape of a task.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final, Literal

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
#: Methods a server may answer with a task (TASK-02: only `tools/call` today).
TASK_AUGMENTED_METHODS: Final = frozenset({"tools/call"})
TASK_STATUS_NOTIFICATION: Final = "notifications/tasks"

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: Final[frozenset[str]] = frozenset({"completed", "failed", "cancelled"})

#: The `requiredCapabilities` of -32021 when a request must negotiate tasks (TASK-05/18).
REQUIRED_TASKS: Final[dict[str, Any]] = {"extensions": {TASKS_EXTENSION: {}}}


def declares_tasks(client_capabilities: dict[str, Any]) -> bool:
    """TASK-01/03: the request's own capabilities name the extension (an object, even empty)."""
    extensions = client_capabilities.get("extensions")
    return isinstance(extensions, dict) and isinstance(extensions.get(TASKS_EXTENSION), dict)


def timestamp(epoch: float) -> str:
    """ISO 8601 in UTC with milliseconds, e.g. `2026-12-01T07:30:00.123Z`."""
    moment = datetime.fromtimestamp(epoch, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def task_wire(
    task_id: str,
    status: str,
    created: float,
    updated: float,
    ttl_ms: int | None,
    poll_interval_ms: int | None,
    status_message: str | None = None,
) -> dict[str, Any]:
    """The `Task` object: the fields every task shape shares (flat, no nested `task`)."""
    out: dict[str, Any] = {
        "taskId": task_id,
        "status": status,
        "createdAt": timestamp(created),
        "lastUpdatedAt": timestamp(updated),
        "ttlMs": ttl_ms,
    }
    if poll_interval_ms is not None:
        out["pollIntervalMs"] = poll_interval_ms
    if status_message is not None:
        out["statusMessage"] = status_message
    return out
