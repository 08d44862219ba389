"""What a front call gets when its backend is not there: down or still connecting
(`Unavailable`), or gone while the call ran (`backend_lost`)."""

from __future__ import annotations

from typing import Any

from ..client import Client, ConnectionClosed
from ..client.stdio import StdioTransport
from ..protocol.errors import InternalError


class Unavailable(Exception):
    """The backend is down or still connecting."""


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
