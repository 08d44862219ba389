"""One exception tree for everything that travels as a JSON-RPC error.

    MCPError                         any JSON-RPC error (code, message, data)
    ├── ParseError                   -32700  body is not JSON
    ├── InvalidRequest               -32600  not a JSON-RPC 2.0 request object
    ├── MethodNotFound               -32601  unknown or removed method (HTTP 404)
    ├── InvalidParams                -32602  bad params, unknown tool/prompt/resource, bad cursor
    │   ├── ResourceNotFound         -32602  (-32002 on the 2025-11-25 wire: RES-14, BASE-20)
    │   └── PromptNotFound           -32602  no prompt of that name (PRM-08)
    ├── InternalError                -32603  unexpected server failure
    ├── HeaderMismatch               -32020  HTTP headers missing or differing from the body
    ├── MissingRequiredClientCapability -32021  request needs a capability it did not declare
    ├── UnsupportedProtocolVersion   -32022  version not served (data.supported, data.requested)
    ├── SessionNotFound              -32600  2025-11-25 HTTP: unknown/ended Mcp-Session-Id (HTTP 404)
    └── ServerBusy                   -31000  no room right now: retry after `retry_after` s (HTTP 503)
        ├── SessionLimitReached      -31001  2025-11-25: too many live sessions
        ├── TaskLimitReached         -31002  tasks extension: too many running tasks
        ├── TooManyInFlight          -31003  2025-11-25: too many requests in flight on a session
        └── StoreUnavailable         -31004  the shared store (Redis) cannot be reached right now

Each class carries `http_status`, the status the Streamable HTTP transport answers with
(CHECKLIST appendix C/D). A caller raising `MCPError(code, ...)` with any other code gets a
plain error with HTTP 200.

Capacity refusals (`ServerBusy`) mean "busy, retry later", never "broken": their codes are
application codes outside the JSON-RPC reserved range -32768..-32000 (BASE-17, BASE-19,
BASE-23), `data.retryAfter` says when to try again (seconds), and on HTTP they are answered
503 with a `Retry-After` header.
"""

from __future__ import annotations

from typing import Any, ClassVar

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
# 2025-11-25 only (BASE-20: never emitted on the 2026-07-28 wire).
LEGACY_RESOURCE_NOT_FOUND = -32002
# Application codes (BASE-23: outside -32768..-32000): capacity refusals, retry later.
SERVER_BUSY = -31000
SESSION_LIMIT_REACHED = -31001
TASK_LIMIT_REACHED = -31002
TOO_MANY_IN_FLIGHT = -31003
STORE_UNAVAILABLE = -31004


class MCPError(Exception):
    """A JSON-RPC error. `to_wire()` gives the `error` member of a response."""

    code: int = INTERNAL_ERROR
    http_status: int = 200
    default_message: ClassVar[str] = "Error"

    def __init__(
        self,
        message: str | None = None,
        data: Any = None,
        *,
        code: int | None = None,
        http_status: int | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.data = data
        if code is not None:
            self.code = code
        if http_status is not None:
            self.http_status = http_status
        super().__init__(self.message)

    def to_wire(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"


class ParseError(MCPError):
    code = PARSE_ERROR
    http_status = 400
    default_message = "Parse error: the body is not valid JSON"


class InvalidRequest(MCPError):
    code = INVALID_REQUEST
    http_status = 400
    default_message = "Invalid request: not a JSON-RPC 2.0 request object"


class MethodNotFound(MCPError):
    code = METHOD_NOT_FOUND
    http_status = 404  # TR-HDR-05
    default_message = "Method not found"


class InvalidParams(MCPError):
    code = INVALID_PARAMS
    default_message = "Invalid params"


class ResourceNotFound(InvalidParams):
    """RES-13/15: no resource at this URI. `data` carries the URI. The 2025-11-25 session wire
    answers it with -32002 instead (see `mcpkit.server.legacy.shaping`)."""

    def __init__(self, uri: str, message: str | None = None) -> None:
        super().__init__(message or f"Resource not found: {uri}", {"uri": uri})
        self.uri = uri


class PromptNotFound(InvalidParams):
    """PRM-08: no prompt of this name (-32602 on both wires). `data` carries the name."""

    def __init__(self, name: str, message: str | None = None) -> None:
        super().__init__(message or f"Unknown prompt: {name}", {"name": name})
        self.name = name


class InternalError(MCPError):
    code = INTERNAL_ERROR
    default_message = "Internal error"


class HeaderMismatch(MCPError):
    code = HEADER_MISMATCH
    http_status = 400  # TR-HDR-03, TR-HDR-12..14
    default_message = "Header mismatch"


class MissingRequiredClientCapability(MCPError):
    """BASE-49: the request needs a client capability it did not declare."""

    code = MISSING_REQUIRED_CLIENT_CAPABILITY
    http_status = 400

    def __init__(self, required: dict[str, Any], message: str | None = None) -> None:
        names = ", ".join(sorted(required)) or "?"
        super().__init__(
            message or f"This request needs the client capability: {names}",
            {"requiredCapabilities": required},
        )
        self.required = required


class UnsupportedProtocolVersion(MCPError):
    """VER-02: data carries `supported` (list) and `requested`."""

    code = UNSUPPORTED_PROTOCOL_VERSION
    http_status = 400

    def __init__(self, requested: Any, supported: list[str]) -> None:
        super().__init__(
            f"Unsupported protocol version {requested!r}; supported: {', '.join(supported)}",
            {"supported": list(supported), "requested": requested},
        )
        self.requested = requested
        self.supported = list(supported)


class SessionNotFound(InvalidRequest):
    """2025-11-25 Streamable HTTP: the session id is unknown, ended or reaped. HTTP 404 tells the
    client to start a new session with `initialize`."""

    http_status = 404
    default_message = "Session not found: it ended or never existed; send initialize again"


class ServerBusy(MCPError):
    """No room for this right now; the same request may succeed after `retry_after` seconds.
    A capacity refusal, not a failure: HTTP 503 with `Retry-After`, `data.retryAfter`."""

    code = SERVER_BUSY
    http_status = 503
    default_message = "The server is busy; try again later"

    def __init__(
        self, message: str | None = None, data: Any = None, *, retry_after: int = 5
    ) -> None:
        self.retry_after = retry_after
        merged = {"retryAfter": retry_after, **(data if isinstance(data, dict) else {})}
        super().__init__(message, merged)


class SessionLimitReached(ServerBusy):
    """2025-11-25: no room for another live session right now."""

    code = SESSION_LIMIT_REACHED
    default_message = "Too many open sessions; try again later"


class TaskLimitReached(ServerBusy):
    """Tasks extension: no room for another running task right now."""

    code = TASK_LIMIT_REACHED
    default_message = "Too many tasks in progress on this server; try again later"


class TooManyInFlight(ServerBusy):
    """2025-11-25: a session has as many requests in flight as it may have."""

    code = TOO_MANY_IN_FLIGHT
    default_message = "Too many requests in flight on this session; try again later"


class StoreUnavailable(ServerBusy):
    """The shared store this request needs (Redis: tasks, handles, single-use state) cannot be
    reached right now; nothing was done, and the same request may succeed once it is back."""

    code = STORE_UNAVAILABLE
    default_message = "The shared store is unavailable; try again shortly"


_BY_CODE: dict[int, type[MCPError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        HeaderMismatch,
        ServerBusy,
        SessionLimitReached,
        TaskLimitReached,
        TooManyInFlight,
        StoreUnavailable,
    )
}


def error_from_wire(error: Any) -> MCPError:
    """Build the matching exception from a received `error` member (client side)."""
    if not isinstance(error, dict):
        return InternalError("Malformed error response", error)
    code = error.get("code")
    message = str(error.get("message") or "")
    data = error.get("data")
    if not isinstance(code, int):
        return InternalError(message or "Malformed error response", error)
    if code == MISSING_REQUIRED_CLIENT_CAPABILITY:
        required = data.get("requiredCapabilities") if isinstance(data, dict) else None
        exc: MCPError = MissingRequiredClientCapability(
            required if isinstance(required, dict) else {}, message or None
        )
        exc.data = data
        return exc
    if code == UNSUPPORTED_PROTOCOL_VERSION:
        supported = data.get("supported") if isinstance(data, dict) else None
        requested = data.get("requested") if isinstance(data, dict) else None
        exc = UnsupportedProtocolVersion(
            requested, [v for v in supported or [] if isinstance(v, str)]
        )
        exc.message = message or exc.message
        exc.data = data
        return exc
    cls = _BY_CODE.get(code)
    if cls is not None and issubclass(cls, ServerBusy):
        after = data.get("retryAfter") if isinstance(data, dict) else None
        busy = cls(message or None, data, retry_after=after if type(after) is int else 5)
        busy.data = data
        return busy
    if cls is not None:
        return cls(message or None, data)
    return MCPError(message, data, code=code)
