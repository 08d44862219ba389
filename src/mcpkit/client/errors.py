"""Errors raised by the client itself, never sent by the peer (BASE-22).

    ClientError                 anything mcpkit's client detected locally
    ├── TransportError          the connection failed (HTTP status, unexpected content, ...)
    │   ├── ConnectFailed       the request certainly never reached the server: connection
    │   │                       refused, DNS failure, TLS handshake or connect timeout, the
    │   │                       stdio process could not start. Always safe to retry.
    │   └── ConnectionClosed    the server process or connection went away after the request
    │       │                   was sent: it may or may not have run (retry with an
    │       │                   idempotency key)
    │       └── StreamBroken    an HTTP response stream ended before its response (re-sent
    │                           once with a new id and the same idempotency key: TR-HTTP-22)
    ├── RequestTimeout          no response within the timeout (also a TimeoutError)
    ├── InvalidResponse         the peer answered with something that is not valid MCP
    ├── TaskCancelled           the task running a call ended `cancelled` (tasks extension)
    └── AuthorizationError      no usable access token (discovery, registration, user, policy)
        └── OAuthError          the authorization server answered an OAuth error

None of these subclass `MCPError`: an `MCPError` always means the server sent that error.
"""

from __future__ import annotations


class ClientError(Exception):
    """Base class for errors detected by the client, not sent by the server."""


class TransportError(ClientError):
    """The transport failed; `status` holds the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None, body: str | None = None):
        super().__init__(message)
        self.status = status
        self.body = body


class ConnectFailed(TransportError):
    """No connection to the server could be made, so the request was certainly not delivered
    (connection refused, DNS failure, TLS handshake or connect timeout, a stdio command that
    cannot start). Retrying can never run anything twice."""


class ConnectionClosed(TransportError):
    """The server process exited or the connection closed before the response arrived. The
    request may have been processed: retry it only with an idempotency key."""


class StreamBroken(ConnectionClosed):
    """An HTTP response stream ended before its response: the request is lost, and the client
    re-sends it as a new request with a new id (TR-HTTP-22)."""


class RequestTimeout(ClientError, TimeoutError):
    """No response arrived within the request timeout (the request was cancelled)."""


class InvalidResponse(ClientError):
    """The server's message breaks the protocol (bad JSON, unknown `resultType`, ...)."""


class TaskCancelled(ClientError):
    """The server ran the call as a task, and the task ended `cancelled`; `task_id` names it."""

    def __init__(self, message: str, *, task_id: str) -> None:
        super().__init__(message)
        self.task_id = task_id


class AuthorizationError(ClientError):
    """Authorization failed or was refused locally (mismatched `iss`, `resource` or issuer,
    no PKCE support, retry limit reached, user declined); `status` is the MCP server's HTTP
    status that started the flow, when there was one."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class OAuthError(AuthorizationError):
    """An OAuth error response (RFC 6749 §5.2): `error`, `description`, the HTTP `status`."""

    def __init__(
        self, error: str, description: str | None = None, *, status: int | None = None
    ) -> None:
        super().__init__(f"{error}: {description}" if description else error, status=status)
        self.error = error
        self.description = description
