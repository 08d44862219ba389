"""JSON-RPC 2.0 framing on orjson: bytes in, message objects out, and back.

No I/O. `decode()` turns one body (or one stdio line) into a `Request`, `Notification` or
`Response`, raising `ParseError` / `InvalidRequest` (with `.request_id` set when the id could be
read, BASE-11). The `encode_*` functions produce the bytes to put on the wire.
"""

from __future__ import annotations

from typing import Any, NoReturn

import orjson

from .errors import InvalidRequest, MCPError, ParseError

RequestId = str | int
JSONObject = dict[str, Any]

_dumps = orjson.dumps
_loads = orjson.loads


class Request:
    __slots__ = ("id", "method", "params")

    def __init__(self, id: RequestId, method: str, params: JSONObject | None) -> None:
        self.id = id
        self.method = method
        self.params = params

    def __repr__(self) -> str:
        return f"Request(id={self.id!r}, method={self.method!r})"


class Notification:
    __slots__ = ("method", "params")

    def __init__(self, method: str, params: JSONObject | None) -> None:
        self.method = method
        self.params = params

    def __repr__(self) -> str:
        return f"Notification(method={self.method!r})"


class Response:
    """A result or error response (client side; servers only produce these)."""

    __slots__ = ("error", "id", "result")

    def __init__(self, id: RequestId | None, result: Any = None, error: Any = None) -> None:
        self.id = id
        self.result = result
        self.error = error

    @property
    def is_error(self) -> bool:
        return self.error is not None

    def __repr__(self) -> str:
        kind = "error" if self.error is not None else "result"
        return f"Response(id={self.id!r}, {kind})"


Message = Request | Notification | Response


def valid_id(value: Any) -> bool:
    """BASE-03/04: an id is a string or an integer (never null, bool or float)."""
    t = type(value)
    return t is str or t is int


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    try:
        return _loads(data)
    except orjson.JSONDecodeError as exc:
        raise ParseError() from exc


def decode(data: bytes | bytearray | memoryview | str) -> Message:
    """Parse one JSON-RPC message (no batches: TR-HTTP-09)."""
    return parse(loads(data))


def parse(obj: Any) -> Message:
    if type(obj) is not dict:
        raise InvalidRequest(
            "Invalid request: expected one JSON-RPC object (batches are not supported)"
        )
    rid = obj.get("id")
    has_id = "id" in obj
    if obj.get("jsonrpc") != "2.0":
        _fail('Invalid request: "jsonrpc" must be "2.0"', rid if valid_id(rid) else None)
    method = obj.get("method")
    if method is None:
        if "result" in obj or "error" in obj:
            if has_id and rid is not None and not valid_id(rid):
                _fail("Invalid response: bad id", None)
            return Response(rid, obj.get("result"), obj.get("error"))
        _fail('Invalid request: "method" is missing', rid if valid_id(rid) else None)
    if type(method) is not str or not method:
        _fail(
            'Invalid request: "method" must be a non-empty string', rid if valid_id(rid) else None
        )
    params = obj.get("params")
    if params is not None and type(params) is not dict:
        _fail('Invalid request: "params" must be an object', rid if valid_id(rid) else None)
    if not has_id:
        return Notification(method, params)
    if type(rid) is not str and type(rid) is not int:
        _fail('Invalid request: "id" must be a string or an integer, never null', None)
    return Request(rid, method, params)


def _fail(message: str, request_id: RequestId | None) -> NoReturn:
    exc = InvalidRequest(message)
    exc.request_id = request_id  # type: ignore[attr-defined]
    raise exc


def request_id_of(exc: BaseException) -> RequestId | None:
    rid = getattr(exc, "request_id", None)
    return rid if valid_id(rid) else None


def id_in(data: bytes | bytearray | memoryview | str) -> RequestId | None:
    """The id of a request body, when one can be read (for errors raised before decoding)."""
    try:
        msg = decode(data)
    except MCPError as exc:
        return request_id_of(exc)
    return msg.id if type(msg) is Request else None


def encode_result(request_id: RequestId, result: Any) -> bytes:
    return _dumps({"jsonrpc": "2.0", "id": request_id, "result": result})


def encode_error(request_id: RequestId | None, error: MCPError) -> bytes:
    if request_id is None:
        return _dumps({"jsonrpc": "2.0", "error": error.to_wire()})
    return _dumps({"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()})


def encode_unread_error(error: MCPError) -> bytes:
    """An error for a message that was never read (too large, too slow): no `id`, as for a
    parse error. MCP's schemas allow only a string or integer id, or none at all (BASE-11)."""
    return _dumps({"jsonrpc": "2.0", "error": error.to_wire()})


def encode_notification(method: str, params: JSONObject | None = None) -> bytes:
    if params is None:
        return _dumps({"jsonrpc": "2.0", "method": method})
    return _dumps({"jsonrpc": "2.0", "method": method, "params": params})


def encode_request(request_id: RequestId, method: str, params: JSONObject | None = None) -> bytes:
    msg: JSONObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        msg["params"] = params
    return _dumps(msg)


def dumps(obj: Any) -> bytes:
    return _dumps(obj)


Fragment = orjson.Fragment
