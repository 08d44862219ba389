"""What becomes of a task whose instance stopped renewing its lease: `failed`, with a JSON-RPC
error that says so (TASK-17), never left `working`. Used by `RedisTaskStore` wherever it finds
a lapsed lease (a `tasks/get`, a listen stream following the task, its sweep)."""

from __future__ import annotations

import time
from typing import Any

from ...protocol.errors import InternalError
from ...protocol.tasks import timestamp

__all__ = ["failed_view", "lapsed_error"]


def lapsed_error() -> InternalError:
    """What a task whose instance stopped renewing its lease fails with (TASK-17)."""
    return InternalError(
        "The server instance running this task stopped (its lease on the task lapsed) "
        "before the task finished; start it again",
        {"reason": "lease-expired"},
    )


def failed_view(detailed: dict[str, Any], error: InternalError) -> dict[str, Any]:
    """`detailed` (a DetailedTask) as a `failed` task with `error`, its questions and result
    dropped."""
    out = {k: v for k, v in detailed.items() if k not in ("inputRequests", "result")}
    out.update(
        status="failed",
        error=error.to_wire(),
        statusMessage=error.message,
        lastUpdatedAt=timestamp(time.time()),
    )
    return out
