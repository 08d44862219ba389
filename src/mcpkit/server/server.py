"""`Server`: register tools, resources, templates, prompts and completion; serve them anywhere."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..protocol.content import Icon, Implementation
from ..protocol.errors import InternalError, MCPError, MethodNotFound
from ..protocol.idempotency import IDEMPOTENCY_EXTENSION
from ..protocol.jsonrpc import encode_error, encode_result
from ..protocol.tasks import TASKS_EXTENSION
from ..protocol.versions import LEGACY_VERSIONS, META_SERVER_INFO, MODERN_VERSIONS
from ..telemetry.config import TelemetryError
from ..telemetry.config import resolve as resolve_telemetry
from . import admission, methods
from .admission import ServerRequest
from .caching import DEFAULT_CACHE, CacheHint
from .env import read_setting
from .events import EventBus
from .middleware import Call, CallNext, Middleware, chain
from .mrtr import MrtrEngine
from .prompts import Prompt
from .readiness import Readiness
from .registrations import Completer, Registrations
from .request_state import StateSealer, StateStore
from .resources import Resource, ResourceTemplate
from .scaling import Scaling
from .subscriptions import Subscription, SubscriptionHub
from .tasks import TaskStore
from .tasks.methods import METHODS as TASK_METHODS
from .tasks.methods import listened_tasks
from .tools import Tool

if TYPE_CHECKING:
    from ..protocol.jsonrpc import Notification
    from ..telemetry.config import Telemetry
    from .handles import Handles, HandleStore
    from .health import Health
    from .idempotency import IdempotencyStore
    from .mount import Mount
    from .telemetry import ServerTelemetry
    from .transports.http import StreamableHTTPApp
    from .transports.memory import MemoryTransport

log = logging.getLogger("mcpkit.server")
#: `lifespan(server)`: an async context manager entered when serving starts; what it yields is
#: `server.lifespan_state` (`ctx.lifespan` in handlers, `call.lifespan` in middleware).
Lifespan = Callable[["Server"], AbstractAsyncContextManager[Any]]


class Server(Registrations, Scaling):
    """An MCP server: register tools, resources, templates, prompts and completion from
    type-hinted functions, then serve them over stdio, Streamable HTTP or in process.

    ```python
    server = Server("weather", version="1.0")

    @server.tool()
    async def forecast(city: str, days: int = 3) -> str:
        "Forecast for a city."
        return f"{city}: sunny for {days} days"

    server.run()  # stdio; server.run("http", port=8000): http://127.0.0.1:8000/mcp
    ```
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[Icon] | None = None,
        supported_versions: tuple[str, ...] = MODERN_VERSIONS,
        cache: dict[str, CacheHint] | None = None,
        page_size: int | None = None,
        include_server_info: bool = True,
        state_keys: list[bytes | str] | None = None,
        state_ttl_seconds: float = 600.0,
        single_use_state: StateStore | None = None,
        event_bus: EventBus | None = None,
        legacy: bool = True,
        tasks: TaskStore | None = None,
        middleware: Sequence[Middleware] = (),
        lifespan: Lifespan | None = None,
        mask_errors: bool | None = None,
        handles: HandleStore | None = None,
        idempotency: IdempotencyStore | None = None,
        telemetry: bool | Telemetry | None = None,
    ) -> None:
        """Optional parts are off or in memory by default: `tasks`, `handles`,
        `idempotency`, `event_bus`, `single_use_state` say where state lives (Redis for several
        instances: `use_redis`); `legacy=False` serves the 2026-07-28 wire only; `mask_errors`
        None follows `MCPKIT_MASK_ERRORS` (on when unset); `telemetry`: OpenTelemetry spans
        and metrics (`mcpkit[otel]`), None follows `MCPKIT_TELEMETRY` (off when unset)."""
        self.info = Implementation(name, version, title=title, website_url=website_url, icons=icons)
        self.instructions = instructions
        self._set_up_versions(supported_versions, legacy)
        self.cache: dict[str, CacheHint] = {**DEFAULT_CACHE, **(cache or {})}
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be >= 1")
        self.page_size = page_size
        self.result_meta: dict[str, Any] | None = (
            {META_SERVER_INFO: self.info.to_wire()} if include_server_info else None
        )
        self._set_up_registries(event_bus)
        # requestState keys: first seals, all open (rotation). Give every instance the same keys
        # (or MCPKIT_STATE_KEYS) when several serve one endpoint.
        self.mrtr = MrtrEngine(
            StateSealer(state_keys, ttl_seconds=state_ttl_seconds), single_use_state
        )
        self._set_up_scaling(tasks, idempotency, handles)
        self._set_up_running(lifespan, mask_errors)
        self._set_up_middleware(middleware, telemetry)
        #: Servers mounted here (`mount`), and who hears this server's changes synchronously
        #: as `(method, params)` (a parent it is mounted in).
        self.mounts: list[Mount] = []
        self.change_listeners: list[Callable[[str, dict[str, Any] | None], None]] = []

    def _set_up_versions(self, supported_versions: tuple[str, ...], legacy: bool) -> None:
        #: Versions served statelessly (per-request `_meta`).
        self.supported_versions = tuple(supported_versions)
        #: Dual-era (default): `initialize` opens a 2025-11-25 session on stdio and HTTP (VER-14).
        #: False: modern only; `initialize` gets -32022 naming the versions served (VER-12).
        self.legacy = legacy
        #: What `server/discover` and -32022 `data.supported` list: every version served (B.1.4).
        self.advertised_versions: tuple[str, ...] = self.supported_versions + (
            LEGACY_VERSIONS if legacy else ()
        )
        #: Why 2025-11-25 sessions are not served, added to the -32022 `initialize` gets.
        self.legacy_refusal: str | None = None

    def _set_up_registries(self, event_bus: EventBus | None) -> None:
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: list[ResourceTemplate] = []
        self.prompts: dict[str, Prompt] = {}
        self.completer: Completer | None = None
        self.subscriptions = SubscriptionHub(bus=event_bus)
        self.list_cache: dict[tuple[Any, ...], Any] = {}
        #: Whether any tool, resource or prompt requires scopes (lists then filter per token).
        self.any_scopes = False

    def _set_up_scaling(
        self,
        tasks: TaskStore | None,
        idempotency: IdempotencyStore | None,
        handles: HandleStore | None,
    ) -> None:
        #: Tasks (the `io.modelcontextprotocol/tasks` extension) of tools registered with
        #: `task=`; advertised in `server/discover` once such a tool exists.
        self.tasks = TaskStore()
        self.set_task_store(tasks if tasks is not None else self.tasks)
        self.serves_tasks = False
        self._methods = {**methods.METHODS, **TASK_METHODS}
        #: Idempotency keys on `tools/call` (the `dev.mcpkit/idempotency` extension); off: None.
        self.idempotency: IdempotencyStore | None = None
        self.idempotency_settings: dict[str, Any] | None = None
        if idempotency is not None:
            self.set_idempotency(idempotency)
        #: State handles for tools (`server.handles.kind("basket", ttl=...)`); in memory unless
        #: given a shared store (`RedisHandleStore`) for several instances.
        self._handle_store = handles
        self._handles: Handles | None = None

    def _set_up_running(self, lifespan: Lifespan | None, mask_errors: bool | None) -> None:
        self.lifespan = lifespan
        #: What `lifespan` yielded, while serving (None before startup and without a lifespan).
        self.lifespan_state: Any = None
        #: The entered `lifespan` while serving, else None (`ctx.lifespan` is then an error).
        self.lifespan_stack: AsyncExitStack | None = None
        #: Unexpected handler exceptions reach clients as a generic error with a reference id
        #: (default; `MCPKIT_MASK_ERRORS=0` or `mask_errors=False` shows them, for development).
        self._mask_errors = (
            read_setting("mask_errors") if mask_errors is None else bool(mask_errors)
        )
        #: Timeout of tools registered without one (`MCPKIT_TOOL_TIMEOUT`; None: no limit).
        self.tool_timeout: float | None = read_setting("tool_timeout")
        #: `/readyz`: the checks this instance must pass to get traffic, and draining.
        self.readiness = Readiness()

    def _set_up_middleware(
        self, middleware: Sequence[Middleware], telemetry: bool | Telemetry | None
    ) -> None:
        self.middleware: list[Middleware] = []
        self._chain: CallNext | None = None
        #: Spans and metrics (first in the middleware chain); None when telemetry is off.
        self.telemetry: ServerTelemetry | None = None
        config = resolve_telemetry(telemetry)
        if config is not None:
            from .telemetry import ServerTelemetry

            self.telemetry = ServerTelemetry(self, config)
        for mw in middleware:
            self.add_middleware(mw)
        if self.telemetry is not None and self._chain is None:
            self._chain = chain([self.telemetry], self._endpoint)

    # -- registration: tool(), resource(), prompt(), completion() are `Registrations`' ------
    @property
    def uses_handles(self) -> bool:
        """Whether a handle kind was made (`server.handles.kind(...)`)."""
        return self._handles is not None and bool(self._handles.kinds)

    @property
    def handles(self) -> Handles:
        """State handles for tools: `server.handles.kind("basket", ttl=1800)` (made on first
        use, so servers without handles do not load them)."""
        if self._handles is None:
            from .handles import Handles

            self._handles = Handles(self._handle_store)
        return self._handles

    # -- protocol --------------------------------------------------------------------------
    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        if self.tools:
            caps["tools"] = {"listChanged": True}
        if self.prompts:
            caps["prompts"] = {"listChanged": True}
        if self.resources or self.templates:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self.completer is not None:
            caps["completions"] = {}
        caps["logging"] = {}
        extensions: dict[str, Any] = {TASKS_EXTENSION: {}} if self.serves_tasks else {}  # TASK-01
        if self.idempotency_settings is not None:
            extensions[IDEMPOTENCY_EXTENSION] = self.idempotency_settings
        if extensions:
            caps["extensions"] = extensions
        return caps

    admit = admission.admit
    """The front door every transport calls first: `server.admit(data, http, session=...,
    emit=..., outbox=...)`, one received message in, what to do with it out (or `Refused`).
    No I/O. See `mcpkit.server.admission`."""

    async def handle(self, request: ServerRequest) -> Any:
        """THE dispatch point: answer one admitted request; the `result` value. The
        middleware chain, when there is one, runs here."""
        if self._chain is not None:
            return await self._chain(Call(self, request))
        handler = self._methods.get(request.method)
        if handler is None:
            raise MethodNotFound(f"Method not found: {request.method}")
        return await handler(self, request)

    async def _endpoint(self, call: Call) -> Any:
        """The innermost link of the middleware chain: the method's handler."""
        request = call.admitted()
        handler = self._methods.get(request.method)
        if handler is None:
            raise MethodNotFound(f"Method not found: {request.method}")
        return await handler(self, request)

    def add_middleware(self, middleware: Middleware) -> None:
        """Append a middleware (innermost so far): `async (call, call_next) -> result`."""
        self.middleware.append(middleware)
        first = [self.telemetry] if self.telemetry is not None else []
        self._chain = chain([*first, *self.middleware], self._endpoint)

    async def answer(self, request: ServerRequest) -> bytes:
        """The response bytes of one admitted request (message transports: stdio, memory)."""
        try:
            if request.method == "subscriptions/listen":
                raise MethodNotFound("subscriptions/listen is served by the transport")
            return encode_result(request.id, await self.handle(request))
        except MCPError as exc:
            return encode_error(request.id, exc)
        except Exception:
            log.exception("internal error answering %s", request.method)
            return encode_error(request.id, InternalError())

    async def open_subscription(self, request: ServerRequest) -> Subscription:
        """Start a `subscriptions/listen` stream; the transport sends `acknowledgement()` first.
        While the server drains, the stream ends with its result right after that (SUB-11)."""
        caps = self.capabilities()
        supported: set[str] = set()
        if "tools" in caps:
            supported.add("toolsListChanged")
        if "prompts" in caps:
            supported.add("promptsListChanged")
        if "resources" in caps:
            supported |= {"resourcesListChanged", "resourceSubscriptions"}
        if not supported:
            raise MethodNotFound("Method not found: subscriptions/listen (nothing to listen for)")
        requested = request.params.get("notifications")
        task_ids = None
        if isinstance(requested, dict) and "taskIds" in requested:
            requested = dict(requested)
            task_ids = await listened_tasks(self, requested.pop("taskIds"), request.meta)
        return self.subscriptions.open(request.id, requested, supported, task_ids)

    def health(self) -> Health:
        """This instance's state: its event bus (connected since when, events through)."""
        from .health import Health

        return Health(bus=self.subscriptions.bus.health())

    def _bus_ready(self) -> bool:
        return self.health().ready

    # -- serving ---------------------------------------------------------------------------
    async def startup(self) -> None:
        """Called by transports when serving begins: enters the `lifespan` (once) and connects
        the event bus."""
        if self.telemetry is not None and self.telemetry.config.uses_globals:
            from ..telemetry.setup import ensure_configured

            ensure_configured(self.telemetry.config.service_name or self.info.name)
        if self.lifespan is not None and self.lifespan_stack is None:
            stack = AsyncExitStack()
            self.lifespan_state = await stack.enter_async_context(self.lifespan(self))
            self.lifespan_stack = stack
        await self.subscriptions.start()
        await self.tasks.start()
        if self.subscriptions.bus.health().kind != "local":  # a shared bus (Redis) that is
            self.readiness.add_check("event bus", self._bus_ready)  # down: /readyz 503

    async def shutdown(self) -> None:
        """Called by transports when serving ends: listen streams get their final result, keyed
        calls still running stop (`stop_detached`), then the `lifespan` exits."""
        await self.tasks.close()
        await self.subscriptions.stop()
        await self.stop_detached()
        stack, self.lifespan_stack = self.lifespan_stack, None
        if stack is not None:
            try:
                await stack.aclose()
            finally:
                self.lifespan_state = None

    def http_app(self, **options: Any) -> StreamableHTTPApp:
        """The raw ASGI app (mount it in Starlette/FastAPI, or serve it with any ASGI server)."""
        from .transports.http import StreamableHTTPApp

        return StreamableHTTPApp(self, **options)

    def memory_transport(
        self, on_notification: Callable[[Notification], Awaitable[None] | None] | None = None
    ) -> MemoryTransport:
        """A client transport bound to this server in the same event loop (`Client(server)`
        uses it; the client never imports the server): the bytes-level path stdio uses."""
        from .transports.memory import MemoryTransport

        return MemoryTransport(self, on_notification)

    def run(
        self,
        transport: str = "stdio",
        *,
        host: str | None = None,
        port: int | None = None,
        **options: Any,
    ) -> None:
        """Serve until stopped: `stdio` (default) or `http` (uvicorn, bound to loopback).

        `host`, `port` and the limits default to `MCPKIT_*` settings (`server.settings`), then
        127.0.0.1:8000. `auth=`: a `BearerAuth` on HTTP; an `EnvironmentAuth` on stdio
        (credentials from the environment, BASE-31). Ctrl-C stops it quietly with exit
        status 130."""
        try:
            if transport == "stdio":
                from .settings import Settings
                from .transports.stdio import run_stdio

                settings = Settings.from_env()
                settings.configure_logging()
                settings.scope_requests(self)
                run_stdio(self, auth=options.get("auth"))
            elif transport in ("http", "streamable-http"):
                from .transports.http_serve import serve_http

                serve_http(self, host=host, port=port, **options)
            else:
                raise ValueError(f"unknown transport {transport!r}: use 'stdio' or 'http'")
        except KeyboardInterrupt:
            raise SystemExit(130) from None
        except TelemetryError as exc:  # an OTEL_* setting it cannot honour: one line
            raise SystemExit(f"mcpkit: {exc}") from None

    def __repr__(self) -> str:
        return f"Server({self.info.name!r}, version={self.info.version!r})"


__all__ = ["Server", "__version__"]
