"""The contract between `ClientSession` and a wire (stdio, Streamable HTTP, memory, yours).

A transport moves one JSON-RPC request to the server and hands back its final response;
notifications that arrive meanwhile go to the `on_notification` callback it was built with.
The session owns ids, `_meta`, result checking and timeouts; the transport owns framing,
transport headers and cancellation on the wire (when `request()` is cancelled it closes
the HTTP stream or sends `notifications/cancelled` on stdio).

Everything beyond that is declared in `capabilities` (`TransportCapabilities`): listen
streams and their re-opening, credentials, 2025-11-25 sessions, tool filtering. The client
reads only the declaration, never the transport's attributes. Extras wrap a transport and
implement the same contract (`mcpkit.client.telemetry.TracedTransport`); HTTP's
authorization wraps its HTTP exchange (`mcpkit.client.auth.exchange`).
"""

from __future__ import annotations

import inspect
import logging
from typing import Any, Protocol, runtime_checkable

from ..protocol.errors import MCPError
from ..protocol.jsonrpc import (
    JSONObject,
    Notification,
    Request,
    RequestId,
    Response,
    encode_error,
    encode_result,
)
from ..protocol.transport import (
    NotificationHandler,
    OpenSession,
    OpenStream,
    ServerRequestHandler,
    SessionChannel,
    ToolFilter,
    TransportCapabilities,
    also,
)
from .errors import ConnectionClosed, TransportError

__all__ = [
    "ConnectionClosed",
    "NotificationHandler",
    "OpenSession",
    "OpenStream",
    "SessionChannel",
    "ToolFilter",
    "Transport",
    "TransportCapabilities",
    "TransportError",
    "TransportSource",
    "also",
    "answer_request",
    "dispatch_notification",
]

logger = logging.getLogger("mcpkit.client")


@runtime_checkable
class Transport(Protocol):
    """What a client transport provides. Implementations: `HttpTransport`, `StdioTransport`,
    the in-process `MemoryTransport` (`Client(server)`), and wrappers such as telemetry's."""

    @property
    def capabilities(self) -> TransportCapabilities:
        """What this transport can do beyond `request` (a plain attribute will do)."""
        ...

    async def start(self) -> None:
        """Open the connection or spawn the process; called once before any request."""
        ...

    async def request(self, request_id: RequestId, method: str, params: JSONObject) -> Response:
        """Send one request and return the server's final response (result or error).

        Raises `TransportError` when the wire fails, saying how far the request got:
        `ConnectFailed` (never delivered), `ConnectionClosed` (sent, no answer) or
        `StreamBroken` (the answer broke off; the session re-sends it). A transport whose
        framing carries the error out of band (an HTTP 4xx with a JSON-RPC error body) may
        raise that `MCPError` itself. Cancelling the call cancels the request on the wire.
        """
        ...

    async def close(self) -> None:
        """Release the connection or shut the process down; pending requests fail."""
        ...


@runtime_checkable
class TransportSource(Protocol):
    """Makes a client transport to itself: an mcpkit `Server` (`Client(server)`), which the
    client never imports."""

    def memory_transport(self, on_notification: NotificationHandler | None = None) -> Transport:
        """A transport bound to this object, notifications going to `on_notification`."""
        ...


async def dispatch_notification(handler: NotificationHandler | None, message: Notification) -> None:
    """Call the handler (sync or async); a failing handler is logged, never fatal."""
    if handler is None:
        return
    try:
        outcome: Any = handler(message)
        if inspect.isawaitable(outcome):
            await outcome
    except Exception:
        logger.exception("notification handler failed for %s", message.method)


async def answer_request(handler: ServerRequestHandler, request: Request) -> bytes:
    """Run the handler for a server→client request (legacy era) and encode its response: the
    handler's `MCPError` as itself, any other failure as -32603 (logged)."""
    try:
        return encode_result(request.id, await handler(request.method, request.params or {}))
    except MCPError as exc:
        return encode_error(request.id, exc)
    except Exception as exc:
        logger.exception("handler for %s failed", request.method)
        return encode_error(request.id, MCPError(f"client handler failed: {exc}", code=-32603))
