"""Errors raised by the client itself, never sent by the peer (BASE-22).

    ClientError                 anything mcpkit's client detected locally
    ├── TransportError          the connection failed (HTTP status, refused, process died)
    │   └── ConnectionClosed    the server process or stream went away
    ├── RequestTimeout          no response within the timeout (also a TimeoutError)
    ├── InvalidResponse         the peer answered with something that is not valid MCP
    └── InputRequired           the server returned an MRTR `input_required` result

None of these subclass `MCPError`: an `MCPError` always means the server sent that error.
"""

from __future__ import annotations

from typing import Any


class ClientError(Exception):
    """Base class for errors detected by the client, not sent by the server."""


class TransportError(ClientError):
    """The transport failed; `status` holds the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None, body: str | None = None):
        super().__init__(message)
        self.status = status
        self.body = body


class ConnectionClosed(TransportError):
    """The server process exited or the stream closed before the response arrived."""


class RequestTimeout(ClientError, TimeoutError):
    """No response arrived within the request timeout (the request was cancelled)."""


class InvalidResponse(ClientError):
    """The server's message breaks the protocol (bad JSON, unknown `resultType`, ...)."""


class InputRequired(ClientError):
    """The server asked for client input (MRTR); this client does not answer it yet."""

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__("The server requires client input (multi round-trip), not supported yet")
        self.result = result
