"""The contract between `ClientSession` and a wire (stdio, Streamable HTTP, tests).

A transport moves one JSON-RPC request to the server and hands back its final response;
notifications that arrive meanwhile go to the `on_notification` callback it was built with.
The session owns ids, `_meta`, result checking and timeouts; the transport owns framing,
transport headers and cancellation on the wire (when `request()` is cancelled it closes
the HTTP stream or sends `notifications/cancelled` on stdio).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, runtime_checkable

from ..protocol.jsonrpc import JSONObject, Notification, RequestId, Response
from .errors import ConnectionClosed, TransportError

__all__ = [
    "ConnectionClosed",
    "NotificationHandler",
    "Transport",
    "TransportError",
    "dispatch_notification",
]

logger = logging.getLogger("mcpkit.client")

NotificationHandler = Callable[[Notification], Awaitable[None] | None]
"""Receives server notifications (progress, log messages, ...); may be sync or async."""


@runtime_checkable
class Transport(Protocol):
    """What a client transport provides. Implementations: `HttpTransport`, `StdioTransport`."""

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

    def accept_tools(self, tools: list[JSONObject]) -> list[JSONObject]:
        """See a `tools/list` page; return the tools this transport can call.

        HTTP drops tools whose `x-mcp-header` annotations are invalid (TR-XMH-07) and
        remembers the rest for `Mcp-Param-*` headers; stdio returns them unchanged.
        """
        ...

    async def close(self) -> None:
        """Release the connection or shut the process down; pending requests fail."""
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
