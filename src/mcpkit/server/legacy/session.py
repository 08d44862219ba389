"""One 2025-11-25 session: what `initialize` negotiated, what is in flight, and how a request is
answered. Transport-neutral: messages leave through an `Outbox` (a stdio pipe, or one SSE stream
of an HTTP session); transports feed `receive_*` with what the client sends.

Every message reaches a session through the front door (`mcpkit.server.admission`), shape
checked against the 2025-11-25 schema. The same handler code serves both eras (CHECKLIST
B.1.7): a session request is a `ServerRequest` of the LEGACY era whose meta comes from the
session (`request_meta`), whose `channel` turns `ctx.elicit` / `ctx.sample` / `ctx.list_roots`
into real requests to the client, and whose results are reshaped for this wire.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from ...protocol.errors import (
    InternalError,
    InvalidRequest,
    MCPError,
    MethodNotFound,
    TooManyInFlight,
    error_from_wire,
)
from ...protocol.jsonrpc import (
    Fragment,
    Response,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
)
from ...protocol.meta import RequestMeta
from ...protocol.versions import LEGACY_LATEST, LEGACY_VERSIONS, PROGRESS_TOKEN
from .. import methods
from ..ownership import current_owner
from ..session_core import InFlight
from ..subscriptions import RESOURCE_UPDATED
from .inputs import LegacyInputs
from .shaping import legacy_error, legacy_page, legacy_result

if TYPE_CHECKING:
    from ..admission import ClientNotification, ServerRequest
    from ..context import Emit
    from ..server import Server

log = logging.getLogger("mcpkit.legacy")

#: Threshold for `notifications/message` until the client sends `logging/setLevel` (the spec
#: leaves the choice to the server; the modern wire sends none unless asked).
DEFAULT_LOG_LEVEL = "info"
#: Methods of the 2026-07-28 wire only (the tasks extension's included: a session runs task
#: tools in place and offers no tasks of its own, B.1.5): unknown on a session.
MODERN_ONLY = frozenset(
    {"server/discover", "subscriptions/listen", "tasks/get", "tasks/update", "tasks/cancel"}
)


class Outbox(Protocol):
    """Where the messages of one request (or of the whole session) go."""

    def send(self, data: bytes) -> None:
        """A notification or a server→client request, before the response."""

    def finish(self, data: bytes | None) -> None:
        """The response (None when the request was cancelled: nothing is sent)."""

    def release(self) -> None:
        """HTTP only (SEP-1699): drop the connection now; the client resumes with Last-Event-ID."""


class LegacySession:
    """State of one session. Not thread-safe: used from the event loop only."""

    def __init__(
        self,
        server: Server,
        session_id: str,
        *,
        request_timeout: float | None = 600.0,
        max_in_flight: int | None = None,
    ) -> None:
        self.server = server
        self.id = session_id
        #: Who opened the session: only the same caller may use it (`ownership`).
        self.owner = current_owner()
        self.max_in_flight = max_in_flight
        self.request_timeout = request_timeout
        self.version = LEGACY_LATEST
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] | None = None
        self.initialized = False  # `notifications/initialized` received
        self.log_level: str | None = None
        self.subscriptions: set[str] = set()
        #: The session's requests in flight, by id (`session_core.InFlight`).
        self.in_flight: InFlight[asyncio.Task[None]] = InFlight()
        self.tasks = self.in_flight.tasks
        self.notify_outbox: Outbox | None = None  # session-wide messages (GET stream, stdout)
        self.closed = False
        #: Set by `stop()`: what requests cancelled from now on answer (None: no answer).
        self.stopped: MCPError | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self.opened = time.monotonic()

    # -- lifecycle ------------------------------------------------------------------------------
    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        """Negotiate from an admitted `initialize` (its shape checked); the InitializeResult."""
        if self.server.telemetry is not None:
            return self.server.telemetry.initialize(self.id, params, lambda: self._agree(params))  # type: ignore[no-any-return]
        return self._agree(params)

    def _agree(self, params: dict[str, Any]) -> dict[str, Any]:
        requested, caps, info = (
            params["protocolVersion"],
            params["capabilities"],
            params["clientInfo"],
        )
        # Same version when we speak it, else our latest legacy one (lifecycle > Version Negotiation).
        self.version = requested if requested in LEGACY_VERSIONS else LEGACY_LATEST
        self.client_capabilities = caps
        self.client_info = info
        # Extensions (tasks) are the modern wire's; a session runs task tools synchronously.
        capabilities = {k: v for k, v in self.server.capabilities().items() if k != "extensions"}
        result: dict[str, Any] = {
            "protocolVersion": self.version,
            "capabilities": capabilities,
            "serverInfo": self.server.info.to_wire(),
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        return result

    def close(self) -> None:
        """End the session: in-flight requests are cancelled, pending questions fail."""
        if self.closed:
            return
        self.closed = True
        if self.server.telemetry is not None:
            self.server.telemetry.session_ended(time.monotonic() - self.opened)
        for task in self.in_flight.running():
            task.cancel()
        self.tasks.clear()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(InternalError("The session ended"))
        self._pending.clear()
        self.subscriptions.clear()
        self.notify_outbox = None

    def stop(self, error: MCPError) -> list[asyncio.Task[None]]:
        """The instance stops: cancel the requests in flight, each answered with `error`."""
        self.stopped = error
        tasks = self.in_flight.running()
        for task in tasks:
            task.cancel()
        return tasks

    # -- client → server ------------------------------------------------------------------------
    def start(self, request: ServerRequest) -> None:
        """Run one admitted request in its own task, owned by the session (disconnect is not
        cancel). Its messages go to `request.outbox`. TooManyInFlight past `max_in_flight`
        (nothing started; the transport answers it)."""
        outbox = request.outbox
        assert outbox is not None, "a session request carries its outbox"
        if self.max_in_flight is not None and len(self.tasks) >= self.max_in_flight:
            raise TooManyInFlight()
        if self.in_flight.in_use(request.id):
            outbox.finish(
                encode_error(request.id, InvalidRequest("Invalid request: id already in use"))
            )
            return
        self.in_flight.start(
            request.id, asyncio.get_running_loop().create_task(self._run(request, outbox))
        )

    async def _run(self, request: ServerRequest, outbox: Outbox) -> None:
        data: bytes | None = None
        try:
            data = await self.respond(request)
        except asyncio.CancelledError:
            # A cancellation has no response (2025-11-25 utilities/cancellation), unless
            # the instance stopped it (`stop`): then the client learns why.
            stopped = self.stopped
            data = None if stopped is None else encode_error(request.id, legacy_error(stopped))
        finally:
            try:
                outbox.finish(data)  # still in flight as it answers (stdio batches its writes)
            finally:
                self.in_flight.forget(request.id, asyncio.current_task())

    async def respond(self, request: ServerRequest) -> bytes:
        """The encoded response to one request (errors included)."""
        telemetry = self.server.telemetry
        try:
            if telemetry is None:
                result = await self._dispatch(request)
            else:  # every request of the session, those answered here too (ping, lists)
                result = await telemetry.observe(request, self._dispatch(request), self.id)
        except MCPError as exc:
            return encode_error(request.id, legacy_error(exc))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("internal error answering %s", request.method)
            return encode_error(request.id, InternalError())
        return encode_result(request.id, result)

    def receive_notification(self, note: ClientNotification) -> None:
        """An admitted notification (its shape checked against the 2025-11-25 schema)."""
        if note.method == "notifications/initialized":
            self.initialized = True
            return
        # Its task answers nothing, and frees the id as it ends (not at once, as on stdio).
        self.in_flight.cancel(note, forget=False)
        # roots/list_changed, progress for our requests: nothing kept, nothing to do.

    def receive_response(self, response: Response) -> None:
        """An answer to one of our requests (elicitation, sampling, roots)."""
        future = self._pending.get(response.id) if type(response.id) is int else None
        if future is None or future.done():
            log.debug("session %s: answer to unknown request %r ignored", self.id, response.id)
        elif response.error is not None:
            future.set_exception(error_from_wire(response.error))
        else:
            future.set_result(response.result)

    # -- server → client ------------------------------------------------------------------------
    async def ask(self, method: str, params: dict[str, Any], outbox: Outbox) -> Any:
        """Send a request to the client on `outbox` and wait for its answer."""
        if self.closed:
            raise InternalError("The session ended")
        self._next_id += 1
        rid = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        outbox.send(encode_request(rid, method, params))
        try:
            return await asyncio.wait_for(future, self.request_timeout)
        except TimeoutError:
            self._cancel_ask(rid, outbox, "timed out")
            raise InternalError(
                f"The client did not answer {method} within {self.request_timeout:g} s"
            ) from None
        except asyncio.CancelledError:
            self._cancel_ask(rid, outbox, "the request that asked was cancelled")
            raise
        finally:
            self._pending.pop(rid, None)

    def _cancel_ask(self, rid: int, outbox: Outbox, reason: str) -> None:
        if not self.closed:
            outbox.send(
                encode_notification("notifications/cancelled", {"requestId": rid, "reason": reason})
            )

    def deliver(self, method: str, params: dict[str, Any] | None, uri: str | None) -> None:
        """A change (tools/prompts/resources list, resource update) for this session's client."""
        outbox = self.notify_outbox
        if outbox is None or not self.initialized:
            return
        if method == RESOURCE_UPDATED and (uri is None or uri not in self.subscriptions):
            return
        outbox.send(encode_notification(method, params))

    # -- dispatch -------------------------------------------------------------------------------
    def request_meta(self, params: dict[str, Any]) -> RequestMeta:
        """A request's view of its session: version, capabilities and log level from the
        session, the progress token from the request (admitted: a string or an integer)."""
        raw = params.get("_meta")
        raw = raw if type(raw) is dict else {}
        return RequestMeta(
            self.version,
            self.client_capabilities,
            self.client_info,
            self.log_level or DEFAULT_LOG_LEVEL,
            raw.get(PROGRESS_TOKEN),
            raw,
        )

    def inputs(self, meta: RequestMeta, outbox: Outbox) -> LegacyInputs:
        """The input channel of a request served on this session: real requests to the client
        on the request's outbox (B.1.7)."""
        return LegacyInputs(self, meta, outbox)

    def emitter(self, outbox: Outbox) -> Emit:
        """The `Emit` of a request served on this session: notifications go to its outbox."""

        async def emit(method: str, params: dict[str, Any]) -> None:
            outbox.send(encode_notification(method, params))

        return emit

    async def _dispatch(self, request: ServerRequest) -> Any:
        method, params = request.method, request.params
        if method == "ping":
            return {}
        if method == "logging/setLevel":
            self.log_level = params["level"]  # one of the levels (admitted)
            return {}
        if method in ("resources/subscribe", "resources/unsubscribe"):
            return self._subscribe(method, params)
        if method in methods.LISTS:
            return self._list(method, params.get("cursor"))
        if method in MODERN_ONLY:
            raise MethodNotFound(f"Method not found: {method}")
        # Server.handle: the one dispatch point (its middleware run for sessions too).
        return legacy_result(await self.server.handle(request))

    def _subscribe(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if "resources" not in self.server.capabilities():
            raise MethodNotFound(f"Method not found: {method} (no resources on this server)")
        uri = params["uri"]  # a string (admitted)
        if method == "resources/subscribe":
            self.subscriptions.add(uri)
        else:
            self.subscriptions.discard(uri)
        return {}

    def _list(self, method: str, cursor: Any) -> Any:
        """List pages encoded once per change, like the modern ones (shape: no cache hints)."""
        granted = methods.list_granted(self.server, method)
        key = ("legacy:" + method, cursor, granted)
        cached = self.server.list_cache.get(key)
        if cached is None:
            page = legacy_page(method, methods.list_page(self.server, method, cursor, granted))
            cached = self.server.list_cache[key] = Fragment(orjson.dumps(page))
        return cached
