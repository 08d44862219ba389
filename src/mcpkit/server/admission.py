"""The front door: every message any transport receives (HTTP, stdio, memory; both eras)
goes through `admit` first, and comes out as one explicit thing to do. No I/O.

    admission = server.admit(data, http, session=session, emit=emit, outbox=outbox)

In one place and in one documented order (CHECKLIST TR-HDR-19, after the HTTP transport's
Origin and auth checks):

1. framing: exactly one JSON-RPC 2.0 object (-32700, -32600; the id kept when readable)
2. era (B.1.1-3): a request whose `_meta` names a protocol version is modern and stateless;
   an `initialize` without one opens a 2025-11-25 session; a message inside a session
   (HTTP: `Mcp-Session-Id`; stdio: once `initialize` succeeded) belongs to it
3. HTTP, modern: mirrored headers present and equal to the body (-32020)
4. `_meta` (-32602), then the version served (-32022)
5. the shape of every request and notification against its revision's schema (-32602)

The answer is one of:

    ServerRequest       a request to answer: `await server.handle(request)` (a listen stream
                        when its method is `subscriptions/listen`)
    OpenSession         a 2025-11-25 `initialize` outside a session: open one
    ClientNotification  a notification to act on (cancelled, initialized, ...)
    ClientResponse      the client's answer to a request a session sent it
    None                nothing to do (a notification nobody acts on, a stray response)

or `Refused`: the error, the request id when it could be read, and whether a notification
was refused (stdio drops those with one log line; HTTP answers 400, TR-HTTP-11).
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, Final

from ..protocol import jsonrpc
from ..protocol.errors import (
    HeaderMismatch,
    InvalidParams,
    InvalidRequest,
    MCPError,
    UnsupportedProtocolVersion,
)
from ..protocol.jsonrpc import Notification, Request, RequestId, Response
from ..protocol.meta import RequestMeta, check_version, read_request_meta, valid_request_meta
from ..protocol.mirroring import check_method_headers, check_param_headers
from ..protocol.shapes import Shapes, shapes_for
from ..protocol.versions import LEGACY_VERSIONS, META_PROTOCOL_VERSION

if TYPE_CHECKING:
    from .context import Emit
    from .inputs import InputChannel
    from .legacy.session import LegacySession, Outbox
    from .server import Server


class Era(enum.Enum):
    """Which wire a message belongs to; the value names the revision whose shapes apply."""

    MODERN = "2026-07-28"  # stateless: version, capabilities and identity on every request
    LEGACY = "2025-11-25"  # a session opened by `initialize`


MODERN, LEGACY = Era.MODERN, Era.LEGACY


class ServerRequest:
    """One admitted request: what `Server.handle` and every handler get.

    Immutable (its attributes are `Final`, checked by mypy) and slotted; a plain class
    because a frozen dataclass costs microseconds per request on the hot path.
    `era` says which wire it came on; `emit` sends a notification on the request's own
    stream (None where there is none); on a 2025-11-25 session, `outbox` is where the
    request's messages go and `channel` asks the client for input with real requests
    (B.1.7). On the modern wire both are None: input is multi round-trip (MRTR)."""

    __slots__ = ("channel", "emit", "era", "id", "meta", "method", "outbox", "params")

    def __init__(
        self,
        id: RequestId,
        method: str,
        params: dict[str, Any],
        meta: RequestMeta,
        era: Era,
        emit: Emit | None = None,
        outbox: Outbox | None = None,
        channel: InputChannel | None = None,
    ) -> None:
        self.id: Final = id
        self.method: Final = method
        self.params: Final = params  # {} when the message had none
        self.meta: Final = meta
        self.era: Final = era
        self.emit: Final = emit
        self.outbox: Final = outbox
        self.channel: Final = channel

    def with_message(self, id: RequestId, method: str, params: dict[str, Any]) -> ServerRequest:
        """The same request (meta, era, streams) with another id, method or params."""
        return ServerRequest(
            id, method, params, self.meta, self.era, self.emit, self.outbox, self.channel
        )

    def with_params(self, params: dict[str, Any]) -> ServerRequest:
        """The same request with other params (a middleware rewriting arguments)."""
        return self.with_message(self.id, self.method, params)

    def __repr__(self) -> str:
        return f"ServerRequest({self.era.name}, id={self.id!r}, method={self.method!r})"


class OpenSession:
    """A 2025-11-25 `initialize` (shape checked) that may open a session."""

    __slots__ = ("id", "params")

    def __init__(self, id: RequestId, params: dict[str, Any]) -> None:
        self.id: Final = id
        self.params: Final = params


#: The message a transport cancels a request's task with when the client asked for it
#: (`notifications/cancelled`, stdio and 2025-11-25 sessions), as opposed to a connection that
#: went away: what lets a keyed `tools/call` tell the two apart (`server.idempotency`, CANC-11).
CANCEL_REQUESTED: Final = "notifications/cancelled"


class ClientNotification:
    """A notification of a known shape (or of a method its revision does not define)."""

    __slots__ = ("era", "method", "params")

    def __init__(self, method: str, params: dict[str, Any], era: Era) -> None:
        self.method: Final = method
        self.params: Final = params
        self.era: Final = era

    @property
    def cancelled_id(self) -> RequestId | None:
        """For `notifications/cancelled`: the request to cancel (shape already checked)."""
        if self.method != "notifications/cancelled":
            return None
        rid = self.params.get("requestId")
        return rid if jsonrpc.valid_id(rid) else None


class ClientResponse:
    """The client's answer to a request of ours (a 2025-11-25 session's input requests)."""

    __slots__ = ("message",)

    def __init__(self, message: Response) -> None:
        self.message: Final = message


Admission = ServerRequest | OpenSession | ClientNotification | ClientResponse | None


class Refused(Exception):
    """The message is refused with `error`. `request_id` is None when it could not be read
    (answer without an id); `notification` is True when the message expected no answer."""

    def __init__(
        self, error: MCPError, request_id: RequestId | None = None, *, notification: bool = False
    ) -> None:
        super().__init__(error.message)
        self.error = error
        self.request_id = request_id
        self.notification = notification


class MirroredHeaders:
    """The HTTP request headers that mirror the body (TR-HDR-*); decoded, not yet checked."""

    __slots__ = ("method", "name", "params", "protocol_version")

    def __init__(
        self,
        protocol_version: str | None = None,
        method: str | None = None,
        name: str | None = None,
        params: dict[str, str] | None = None,
    ) -> None:
        self.protocol_version = protocol_version
        self.method = method
        self.name = name
        self.params = params  # Mcp-Param-* by lower-case suffix


# The hot paths name their revision as a string: `shapes_for` caches by it, and a string
# hashes in C where an Enum member hashes in Python.
_MODERN_REVISION, _LEGACY_REVISION = MODERN.value, LEGACY.value


def shapes(era: Era) -> Shapes:
    return shapes_for(era.value)


def admit(
    server: Server,
    data: bytes | bytearray | memoryview | str,
    http: MirroredHeaders | None = None,
    session: LegacySession | None = None,
    emit: Emit | None = None,
    outbox: Outbox | None = None,
) -> Admission:
    """See the module docstring. `http` is given on HTTP only; `session` when the message
    arrived inside a 2025-11-25 session; `emit` / `outbox` are where a modern / a session
    request's messages go."""
    try:
        msg = jsonrpc.decode(data)
    except MCPError as exc:
        raise Refused(exc, jsonrpc.request_id_of(exc)) from None
    kind = type(msg)
    if kind is Request:
        assert isinstance(msg, Request)
        try:
            return _request(server, msg, http, session, emit, outbox)
        except MCPError as exc:
            if server.telemetry is not None:  # refused at the door: a span all the same
                server.telemetry.refused(msg, exc, session.id if session is not None else None)
            raise Refused(exc, msg.id) from None
    if kind is Notification:
        assert isinstance(msg, Notification)
        return _notification(msg, http, session)
    assert isinstance(msg, Response)
    if session is not None:
        _check_response(msg)
        return ClientResponse(msg)
    if http is not None:
        raise Refused(InvalidRequest("Invalid request: servers do not accept responses here"))
    return None  # stdio: responses mean nothing on the modern wire (PAT-01)


def _request(
    server: Server,
    msg: Request,
    http: MirroredHeaders | None,
    session: LegacySession | None,
    emit: Emit | None,
    outbox: Outbox | None,
) -> Admission:
    params = msg.params
    meta_obj = params.get("_meta") if params is not None else None
    modern = type(meta_obj) is dict and META_PROTOCOL_VERSION in meta_obj
    if http is not None:
        if session is not None:
            return _in_session(server, msg, session, outbox)  # FIXTURE 2.1 rule 1
        version = http.protocol_version
        if version is None or version in LEGACY_VERSIONS:
            if not modern:
                return _outside_session(server, msg, version)
            if version is None:
                raise HeaderMismatch("Header mismatch: the MCP-Protocol-Version header is required")
        _check_headers(server, msg, http, meta_obj)
    elif not modern:
        if msg.method == "initialize" and session is None:
            return _open_session(server, msg)
        if session is not None:
            return _in_session(server, msg, session, outbox)
    body = params if params is not None else {}
    shape = shapes_for(_MODERN_REVISION)
    validator, checks_meta = shape.request(msg.method)
    if checks_meta and validator.is_valid(body):  # the usual request: one schema check
        meta = valid_request_meta(body["_meta"])
    else:  # refused in the documented order: `_meta` (-32602), version (-32022), shape
        meta = read_request_meta(params)  # BASE-46
        check_version(meta.protocol_version, server.supported_versions, server.advertised_versions)
        if validator is not None and not validator.is_valid(body):
            raise shape.refuse(msg.method, body)
    if meta.protocol_version not in server.supported_versions:  # -32022
        check_version(meta.protocol_version, server.supported_versions, server.advertised_versions)
    return ServerRequest(msg.id, msg.method, body, meta, MODERN, emit)


def _outside_session(server: Server, msg: Request, version: str | None) -> OpenSession:
    """HTTP without a session id, on the session era (B.1.3: route `initialize` by method)."""
    if server.legacy:
        if msg.method != "initialize":
            raise InvalidRequest(
                "Bad Request: no Mcp-Session-Id; open a session with initialize first"
            )
        return _open_session(server, msg)
    if msg.method == "initialize" or version is not None:
        requested = version
        if msg.method == "initialize" and msg.params is not None:
            requested = msg.params.get("protocolVersion", version)
        raise _not_served(server, requested)  # VER-12
    raise HeaderMismatch("Header mismatch: the MCP-Protocol-Version header is required")


def _not_served(server: Server, requested: Any) -> UnsupportedProtocolVersion:
    error = UnsupportedProtocolVersion(requested, list(server.advertised_versions))
    if server.legacy_refusal is not None:
        error.message += f" ({server.legacy_refusal})"
    return error


def _open_session(server: Server, msg: Request) -> OpenSession:
    if not server.legacy:  # modern only: name the versions served (VER-12)
        requested = msg.params.get("protocolVersion") if msg.params is not None else None
        raise _not_served(server, requested)
    params = msg.params if msg.params is not None else {}
    try:
        shapes_for(_LEGACY_REVISION).check_request("initialize", params)
    except InvalidParams as exc:
        exc.http_status = 400  # no session is opened: a bad request, not a call that failed
        raise
    return OpenSession(msg.id, params)


def _in_session(
    server: Server, msg: Request, session: LegacySession, outbox: Outbox | None
) -> ServerRequest:
    if msg.method == "initialize":
        raise InvalidRequest("Invalid request: this session is already initialized")
    if outbox is None:
        raise TypeError("a session request needs the outbox its messages go to")
    params = msg.params if msg.params is not None else {}
    shapes_for(_LEGACY_REVISION).check_request(msg.method, params)
    meta = session.request_meta(params)
    return ServerRequest(
        msg.id,
        msg.method,
        params,
        meta,
        LEGACY,
        session.emitter(outbox),
        outbox,
        session.inputs(meta, outbox),
    )


def _check_headers(server: Server, msg: Request, http: MirroredHeaders, meta_obj: Any) -> None:
    """TR-HDR-03/08/09/12..16: present, well-formed, and equal to the body (-32020)."""
    params = msg.params
    check_method_headers(msg.method, params, http.method, http.name)
    if msg.method == "tools/call" and params is not None:
        name = params.get("name")
        tool = server.tools.get(name) if type(name) is str else None
        if tool is not None and tool.header_params:
            check_param_headers(tool.header_params, params.get("arguments"), http.params)
    version = meta_obj.get(META_PROTOCOL_VERSION) if type(meta_obj) is dict else None
    if type(version) is str and version != http.protocol_version:
        raise HeaderMismatch(
            f"Header mismatch: MCP-Protocol-Version {http.protocol_version!r} differs from "
            f"_meta protocolVersion {version!r}"
        )


def _notification(
    msg: Notification, http: MirroredHeaders | None, session: LegacySession | None
) -> ClientNotification | None:
    era = LEGACY if session is not None else MODERN
    if http is not None and session is None and not msg.method.startswith("notifications/"):
        raise Refused(
            InvalidRequest(f"Invalid request: {msg.method} is a request and needs an id"),
            notification=True,
        )
    params = msg.params if msg.params is not None else {}
    try:
        shapes(era).check_notification(msg.method, params)
    except InvalidParams as exc:
        raise Refused(exc, notification=True) from None
    if http is not None and session is None:
        return None  # TR-HTTP-14: nothing is defined for HTTP on the modern wire; accepted
    return ClientNotification(msg.method, params, era)


def _check_response(msg: Response) -> None:
    """A JSON-RPC response: an id, and a result object or an error object (code, message)."""
    error = msg.error
    if error is not None:
        ok = (
            type(error) is dict
            and type(error.get("code")) is int
            and type(error.get("message")) is str
        )
    else:
        ok = type(msg.result) is dict
    if not ok or not jsonrpc.valid_id(msg.id):
        raise Refused(
            InvalidRequest("Invalid response: needs an id and a result or error object"),
            notification=True,
        )
