"""The errors of a task that did not end by its handler's doing: it fails with a JSON-RPC
error that says why (TASK-17), never left `working`.

- `stopped_error`: its instance shut down before it finished (`drain`, `close`);
- `expired_error`: it ran past its TTL (`expiry.py`);
- `lapsed_error`: its instance stopped renewing its lease. Used by `RedisTaskStore` wherever
  it finds a lapsed lease (a `tasks/get`, a listen stream following the task, its sweep).
"""

from __future__ import annotations

import time
from typing import Any

from ...protocol.errors import InternalError
from ...protocol.tasks import timestamp

__all__ = ["expired_error", "failed_view", "lapsed_error", "stopped_error"]


def stopped_error() -> InternalError:
    """What a task still running when its instance shuts down fails with (TASK-17)."""
    return InternalError(
        "The server instance running this task shut down before it finished; start it again",
        {"reason": "instance-stopped"},
    )


def expired_error() -> InternalError:
    """What a task still running at the end of its TTL (`ttlMs`) fails with (TASK-17)."""
    return InternalError(
        "The task ran past its time to live (ttlMs) and was stopped; start it again, or ask "
        "the server's operator for a longer task TTL",
        {"reason": "ttl-expired"},
    )


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
