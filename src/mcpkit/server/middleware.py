"""Middleware: an ordered chain of functions around every request the server answers.

    async def timing(call: Call, call_next: CallNext) -> Any:
        started = time.perf_counter()
        try:
            return await call_next(call)
        finally:
            log.info("%s took %.1f ms", call.method, (time.perf_counter() - started) * 1e3)

    server = Server("shop", middleware=[timing])

A middleware gets the `Call` (method, params, the caller, the server, its lifespan state) and
`call_next`; it returns the request's `result` or raises an `MCPError` (the request's error;
any other exception is answered -32603 and logged by the transport).
Returning without calling `call_next` short-circuits the request. The first middleware in the
list is the outermost. A tool's own failure is already a result (`isError: true`) by the time
it comes back through the chain; protocol errors (unknown tool, bad params) are raised.

Results are what the methods return: a dict, or for cacheable lists an `orjson.Fragment` of
pre-encoded bytes (`orjson.dumps(result)` gives the bytes in both cases).

With no middleware installed `Server.handle` dispatches directly: no `Call` is built.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from .admission import ServerRequest
from .auth.access import current_access
from .context import lifespan_state

if TYPE_CHECKING:
    from ..protocol.jsonrpc import Request
    from ..protocol.meta import RequestMeta
    from .auth.access import AccessToken
    from .context import Emit
    from .server import Server

__all__ = ["Call", "CallNext", "Middleware", "chain"]


class Call:
    """One request on its way through the middleware chain."""

    __slots__ = ("_admitted", "_state", "request", "server")

    def __init__(self, server: Server, request: ServerRequest) -> None:
        self.server = server
        #: The admitted request (`id`, `method`, `params`, `meta`, `era`). Replace it to change
        #: what the handler sees: `call.request = call.request.with_params(new_params)` (a plain
        #: `Request(call.request.id, call.method, new_params)` works too).
        self.request: ServerRequest | Request = request
        self._admitted = request
        self._state: dict[str, Any] | None = None

    @property
    def meta(self) -> RequestMeta:
        """The request's checked `_meta`: protocol version, client info and capabilities."""
        return self._admitted.meta

    @property
    def emit(self) -> Emit | None:
        return self._admitted.emit

    def admitted(self) -> ServerRequest:
        """What the handler gets: `request`, made a `ServerRequest` again if a middleware put
        a plain JSON-RPC `Request` there."""
        request = self.request
        if isinstance(request, ServerRequest):
            return request
        return self._admitted.with_message(request.id, request.method, request.params or {})

    @property
    def state(self) -> dict[str, Any]:
        """Scratch space shared by the middleware of this one request."""
        if self._state is None:
            self._state = {}
        return self._state

    @property
    def method(self) -> str:
        return self.request.method

    @property
    def params(self) -> dict[str, Any]:
        return self.request.params or {}

    @property
    def name(self) -> str | None:
        """The tool or prompt named by `tools/call` / `prompts/get`, the URI of
        `resources/read`; None for other methods."""
        params = self.params
        value = params.get("uri") if self.method == "resources/read" else params.get("name")
        return value if type(value) is str else None

    @property
    def auth(self) -> AccessToken | None:
        """The caller's verified access token (None when the transport has no auth)."""
        return current_access.get()

    @property
    def principal(self) -> str | None:
        """Who is calling, from the verified token; None for unauthenticated transports."""
        access = current_access.get()
        return access.principal if access is not None else None

    @property
    def lifespan(self) -> Any:
        """What the server's `lifespan` yielded (an error if it was never entered)."""
        return lifespan_state(self.server)

    def __repr__(self) -> str:
        return f"Call({self.method!r}, id={self.request.id!r})"


CallNext = Callable[[Call], Awaitable[Any]]
Middleware = Callable[[Call, CallNext], Awaitable[Any]]


def chain(middleware: Sequence[Middleware], endpoint: CallNext) -> CallNext:
    """`endpoint` wrapped by each middleware, the first one outermost."""
    handler = endpoint
    for mw in reversed(middleware):
        handler = _Link(mw, handler)
    return handler


class _Link:
    """`call_next` of one middleware: calls the next one directly (no coroutine of its own)."""

    __slots__ = ("call_next", "mw")

    def __init__(self, mw: Middleware, call_next: CallNext) -> None:
        self.mw = mw
        self.call_next = call_next

    def __call__(self, call: Call) -> Awaitable[Any]:
        return self.mw(call, self.call_next)
