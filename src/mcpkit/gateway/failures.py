"""What a front call gets when its backend is not there: down or still connecting
(`Unavailable`), or gone while the call ran (`BackendLost`, answered as `backend_lost`), and
the caller's line for a tool call that failed (`call_failure`)."""

from __future__ import annotations

from typing import Any

from ..client import (
    Client,
    ClientError,
    ConnectFailed,
    ConnectionClosed,
    RequestTimeout,
    TaskCancelled,
)
from ..client.stdio import StdioTransport
from ..host.deadlines import DeadlineExceeded
from ..host.link import ServerLink
from ..protocol.errors import InternalError


class Unavailable(ConnectFailed):
    """The backend is down or still connecting: the call was certainly not sent (a retry, where
    the gateway's `retry` is on, waits for the backend to be back)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"the {name!r} server is unavailable right now")


class BackendLost(ConnectionClosed):
    """The backend went away while the call ran, so its outcome is unknown (a retry policy
    sees a lost connection). `error` is what the front answers when nothing repeats the call:
    the JSON-RPC error of `backend_lost`."""

    def __init__(self, error: InternalError) -> None:
        super().__init__(error.message)
        self.error = error


def call_failure(front_name: str, link: ServerLink, exc: ClientError | DeadlineExceeded) -> str:
    """The caller's line for a tool call the backend did not answer."""
    if isinstance(exc, Unavailable):
        return (
            f"The {link.name!r} server is unavailable right now (the gateway is reconnecting); "
            "try again shortly."
        )
    if isinstance(exc, DeadlineExceeded):
        return (
            f"The call to {front_name} got no answer within its deadline "
            f"({exc.deadline.describe()}) and was cancelled. It may or may not have taken "
            "effect: check before calling it again."
        )
    if isinstance(exc, RequestTimeout):  # a request of its own (a task's poll) ran out
        return (
            f"The call to {front_name} failed: the {link.name!r} server stopped answering. "
            "It may or may not have taken effect: check before calling it again."
        )
    if isinstance(exc, TaskCancelled):
        return f"The call to {front_name} was cancelled on the {link.name!r} server."
    return (
        f"The call to {front_name} failed: the connection to the {link.name!r} server broke. "
        "It may or may not have taken effect: check before calling it again."
    )


async def backend_lost(name: str, client: Client, exc: ConnectionClosed) -> InternalError:
    """The error of a call whose backend went away while it ran (its process exited, its
    connection closed): the call's outcome is unknown. A JSON-RPC error, never a tool result
    with isError, so a task following the call ends `failed` (TASK-17) and its client can
    tell that the work may never have happened."""
    transport = client.transport
    # A stdio backend that died is usually seen as a broken pipe a moment before its exit.
    code = await transport.exit_code(1.0) if isinstance(transport, StdioTransport) else None
    data: dict[str, Any] = {"reason": "backend-exited", "backend": name}
    if code is not None:
        how = f"exited (code {code})"
        data["exitCode"] = code
    else:
        how = f"went away ({exc})"
        data["reason"] = "backend-disconnected"
    return InternalError(
        f"backend {name!r} {how} during the call; the call's outcome is unknown: check "
        "before calling it again",
        data,
    )
