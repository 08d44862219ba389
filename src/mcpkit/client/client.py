"""`Client`: one MCP server, either era, over stdio, Streamable HTTP or in process.

    async with Client("http://127.0.0.1:8000/mcp", elicitation=ask_user) as client:
        tools = await client.list_tools()
        result = await client.call_tool("forecast", {"city": "Oslo"})
        print(result.text)

The era is detected on connect as the spec says (VER-10, TR-HBC-02/03, TR-STDIO-15..17) and
cached per endpoint or command. Input the server asks for (elicitation, sampling, roots) is
answered by the handlers given here, through MRTR on 2026-07-28 and real requests on legacy
sessions. Results are typed (`mcpkit.client.types`), lists are cached per `ttlMs`/`cacheScope`.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from types import EllipsisType
from typing import TYPE_CHECKING, Any, Literal

from ..protocol.idempotency import IDEMPOTENCY_KEY, advertised, choose_key
from ..protocol.jsonrpc import JSONObject, Notification
from ..protocol.tasks import TASKS_EXTENSION
from ..protocol.tracecontext import trace_meta_problem
from ..protocol.versions import META_LOG_LEVEL
from ..telemetry.config import resolve as resolve_telemetry
from .cache import ResultCache
from .catalog import CatalogRequests
from .connect import Era, make_transport
from .deadline import Deadline
from .era import ERA_CACHE, LegacyStart, connect_era, server_info
from .errors import ClientError
from .http_headers import call_headers
from .inputs import ElicitationHandler, InputHandlers, RootsProvider, SamplingHandler
from .lifecycle import AsyncResource
from .mrtr import complete
from .notifications import (
    LogCallback,
    NotificationRouter,
    ProgressCallback,
    check_log_level,
    no_notifications,
)
from .output_schema import OutputValidator
from .pages import collect, read_page
from .session import ClientSession, Trace, refreshing_tools
from .subscription import Subscription, listen_filter, listen_stream, traced
from .transport import Transport
from .types import CallResult, ServerInfo, Tool

if TYPE_CHECKING:
    from ..telemetry.config import Telemetry
    from .auth.oauth import OAuth
    from .legacy import LegacyClientSession
    from .telemetry import ClientTelemetry

log = logging.getLogger("mcpkit.client")


class Client(AsyncResource, CatalogRequests):
    """One MCP server, either era (see the module docstring).

    `auth`: an `mcpkit.client.auth.OAuth` for servers that answer 401 (HTTP only; a stdio
    server takes credentials from its environment, `env`, as the spec says: BASE-31).
    `tasks`: declare the tasks extension, so that servers may run long tool calls as tasks;
    `call_tool` follows a task to its result either way it is answered.
    `log_level` ("debug" ... "emergency"): ask for the server's log messages at or above it
    on every request (`io.modelcontextprotocol/logLevel`, LOG-03/04; `logging/setLevel` on
    a 2025-11-25 session); they reach `on_log`. None: modern servers send none.
    `extensions`: more extensions to declare (id → settings, VER-07), e.g. MCP Apps.
    `trace`: sees every JSON-RPC message as sent or received (`"send"`/`"recv"`), for
    inspectors; it must not block.
    `telemetry`: an OpenTelemetry span per request sent, its context in `_meta`
    (`mcpkit[otel]`); None follows `MCPKIT_TELEMETRY`. See `mcpkit.telemetry`.
    `connect_timeout`: each step of `connect()` (a known era's probe, `initialize`) may take
    this long instead of `timeout`, for servers slower to start than to answer.
    """

    def __init__(
        self,
        target: Any,
        *,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
        roots: RootsProvider | None = None,
        url_elicitation: bool = False,
        era: Literal["auto", "modern", "legacy"] = "auto",
        timeout: float | None = 60.0,
        connect_timeout: float | EllipsisType | None = ...,
        headers: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stderr: Literal["inherit", "capture", "discard"] = "inherit",
        client_info: JSONObject | None = None,
        cache: bool = True,
        max_input_rounds: int = 8,
        on_notification: Callable[[Notification], Any] | None = None,
        on_log: LogCallback | None = None,
        probe_timeout: float = 5.0,
        auth: OAuth | None = None,
        tasks: bool = True,
        log_level: str | None = None,
        extensions: Mapping[str, JSONObject] | None = None,
        trace: Trace | None = None,
        telemetry: bool | Telemetry | None = None,
    ) -> None:
        check_log_level(log_level)
        self.handlers = InputHandlers(elicitation, sampling, roots, url_elicitation=url_elicitation)
        self.cache = ResultCache() if cache else None
        self.notes = NotificationRouter(self.cache, on_log, on_notification, trace)
        self.trace = trace
        #: Extensions declared besides tasks (the legacy `initialize` carries these too).
        self.extensions: JSONObject = dict(extensions or {})
        self.transport = make_transport(
            target,
            headers=headers,
            env=env,
            cwd=cwd,
            stderr=stderr,
            on_notification=self.notes,
            auth=auth,
        )
        #: `wire`: what requests go through, the transport or the telemetry decorator around it;
        #: `telemetry`: spans and metrics, None when off (the request path is then untouched).
        self.wire, self.telemetry = self._instrumented(resolve_telemetry(telemetry))
        self.requested_era = era
        self.timeout = timeout
        self.connect_timeout = timeout if connect_timeout is ... else connect_timeout
        self.max_input_rounds = max_input_rounds
        self.probe_timeout = probe_timeout
        self.session = self._new_session(tasks, client_info, log_level)
        self.legacy: LegacyClientSession | None = None
        self.info: ServerInfo | None = None
        self._headers_key = hashlib.sha256(
            repr(sorted((headers or {}).items())).encode()
        ).hexdigest()[:16]
        self._tools: dict[str, Tool] = {}
        self._outputs = OutputValidator()

    def _new_session(
        self, tasks: bool, client_info: JSONObject | None, log_level: str | None
    ) -> ClientSession:
        """The 2026-07-28 session over `wire`, declaring our capabilities on every request."""
        capabilities = self.handlers.capabilities()
        declared = {**({TASKS_EXTENSION: {}} if tasks else {}), **self.extensions}
        if declared:
            capabilities["extensions"] = declared  # TASK-01, per request
        session = ClientSession(
            self.wire, timeout=self.timeout, capabilities=capabilities, client_info=client_info
        )
        session.log_level = log_level
        session.trace = self.trace
        return session

    def _instrumented(self, config: Telemetry | None) -> tuple[Transport, ClientTelemetry | None]:
        """The transport, wrapped by `TracedTransport` when telemetry is on, and the telemetry."""
        if config is None:
            return self.transport, None
        from .telemetry import ClientTelemetry, TracedTransport

        telemetry = ClientTelemetry(config, self.transport.capabilities, self._session_version)
        return TracedTransport(self.transport, telemetry), telemetry

    # -- connection ------------------------------------------------------------------------
    @property
    def _auth_key(self) -> str:
        """Private cache entries belong to the credentials in use (CACHE-11)."""
        credentials = self.transport.capabilities.credentials_key
        if credentials is None:
            return self._headers_key
        return self._headers_key + credentials()

    def _session_version(self) -> str | None:
        return self.legacy.protocol_version if self.legacy is not None else None

    @property
    def era(self) -> Era | None:
        return self.info.era if self.info is not None else None  # type: ignore[return-value]

    async def connect(self) -> ServerInfo:
        """Start the transport and learn the server's era (every step has a deadline)."""
        if self.telemetry is not None and self.telemetry.config.uses_globals:
            from ..telemetry.setup import ensure_configured

            ensure_configured(self.telemetry.config.service_name or "mcpkit-client")
        await self.wire.start()
        legacy = LegacyStart(self.wire, self.handlers, self.notes, self.extensions)
        self.info, self.legacy = await connect_era(
            self.transport.capabilities.era_key,
            self.requested_era,
            self.session,
            legacy,
            self.connect_timeout,
            self.probe_timeout,
        )
        self.session.honours_keys = self.supports_idempotency
        return self.info

    async def open(self) -> ServerInfo:
        """What `async with client:` does first: `connect()`."""
        return await self.connect()

    async def close(self) -> None:
        if self.legacy is not None:
            await self.legacy.close()
        await self.wire.close()

    # -- requests --------------------------------------------------------------------------
    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | EllipsisType | None = ...,
        progress: ProgressCallback | None = None,
        use_cache: bool = True,
        max_timeout: float | None = None,
        log_level: str | None = None,
        raw: bool = False,
    ) -> JSONObject:
        """Any request; fulfils input the server asks for; returns the final result object.

        `timeout` (default: the client's) bounds each request sent. With `max_timeout`, every
        progress notification restarts that timeout, up to `max_timeout` seconds in all (CANC-08).
        `log_level` overrides the client's for this request. `raw`: return the server's first
        answer as it is, `input_required` or `task` included (for a proxy that passes it on;
        a legacy session's real requests still go to the input handlers)."""
        body: JSONObject = dict(params or {})
        if log_level is not None:
            check_log_level(log_level)
            body["_meta"] = {**(body.get("_meta") or {}), META_LOG_LEVEL: log_level}
        cache = self.cache if use_cache else None
        if cache is not None:
            hit = cache.get(method, body, self._auth_key)
            if hit is not None:
                return hit  # type: ignore[no-any-return]
        if progress is not None and self.wire.capabilities.notifications is None:
            raise no_notifications(method, self.wire.capabilities.kind)
        limit = self.timeout if timeout is ... else timeout
        deadline = None
        if max_timeout is not None:
            deadline = Deadline(limit, max_timeout)
            progress = deadline.restarting(progress)
        token = self.notes.watch(body, progress) if progress is not None else None
        try:
            if self.legacy is not None:
                result = await self.legacy.request(method, body, timeout=limit, deadline=deadline)
            elif raw:
                result = await self.session.request(
                    method, body, timeout=timeout, deadline=deadline
                )
            else:
                rounds = self.max_input_rounds
                result = await complete(
                    self.session, method, body, self.handlers, rounds, timeout, deadline
                )
        finally:
            if token is not None:
                self.notes.progress.pop(token, None)
        if cache is not None:
            cache.put(method, body, self._auth_key, result)
        return result

    # -- typed API -------------------------------------------------------------------------
    async def discover(self) -> ServerInfo:
        if self.legacy is not None:
            assert self.info is not None
            return self.info
        self.info = server_info(
            await self.request("server/discover"), self.session.protocol_version
        )
        self.session.honours_keys = self.supports_idempotency
        return self.info

    async def list_page(
        self, method: str, key: str, cursor: str | None = None
    ) -> tuple[list[JSONObject], str | None]:
        """One page of a list (`nextCursor` is opaque: PAG-05)."""
        result = await self.request(method, {"cursor": cursor} if cursor is not None else None)
        items, nxt = read_page(method, key, result)
        accept = self.transport.capabilities.accept_tools
        if method == "tools/list" and accept is not None:
            items = accept(items)  # TR-XMH-07
        return items, nxt

    async def _list_all(self, method: str, key: str) -> list[JSONObject]:
        return await collect(method, lambda cursor: self.list_page(method, key, cursor))

    async def list_tools(self) -> list[Tool]:
        tools = [Tool.from_wire(t) for t in await self._list_all("tools/list", "tools")]
        self._tools = {t.name: t for t in tools}
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | EllipsisType | None = ...,
        progress: ProgressCallback | None = None,
        max_timeout: float | None = None,
        idempotency_key: str | bool | None = None,
        meta: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        log_level: str | None = None,
    ) -> CallResult:
        """`tools/call`. A tool failure comes back as a result with `is_error` set.

        `idempotency_key`: a string (as given) or True (a fresh one) goes in `_meta`, kept across
        re-sends and MRTR rounds; a server with the extension (`supports_idempotency`) runs the
        tool once per key. `result.idempotency_key` is the key to retry with. `meta`: extra
        `_meta` keys (your own prefixes: BASE-43). `headers`: extra HTTP headers (not the MCP
        ones). `log_level`: this call's server logs at or above it reach `on_log` (LOG-03/04)."""
        if meta:
            problem = trace_meta_problem(meta)
            if problem is not None:
                raise ValueError(problem)
        params: JSONObject = {"name": name, "arguments": dict(arguments or {})}
        key = None if idempotency_key is None else choose_key(idempotency_key)
        if meta or key is not None:
            params["_meta"] = {**(meta or {}), IDEMPOTENCY_KEY: key} if key else dict(meta or {})

        def send() -> Awaitable[JSONObject]:
            return self.request(
                "tools/call",
                params,
                timeout=timeout,
                progress=progress,
                use_cache=False,
                max_timeout=max_timeout,
                log_level=log_level,
            )

        with call_headers(headers):
            raw = await (
                send() if self.legacy is not None else refreshing_tools(send, self.list_tools)
            )
        result = CallResult.from_wire(raw, key)
        tool = self._tools.get(name)
        if tool is not None and tool.output_schema is not None and not result.is_error:
            self._outputs.check(tool, result.structured_content)  # TOOL-18
        return result

    @property
    def supports_idempotency(self) -> bool:
        """The server advertised the `dev.mcpkit/idempotency` extension (known once connected)."""
        return self.info is not None and advertised(self.info.capabilities) is not None

    def subscribe(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        reopen: bool = True,
    ) -> Subscription:
        """A `subscriptions/listen` stream: `async with client.subscribe(tools=True) as sub:`.

        Over HTTP, a stream that breaks without its final result is opened again (SUB-13;
        `reopen=False` ends the iteration instead): see `Subscription`."""
        wanted = listen_filter(tools, prompts, resources, resource_uris)
        if self.legacy is not None:
            messages = self.legacy.listen(wanted, self.timeout)
            if self.trace is not None:
                messages = traced(messages, self.trace)
            return Subscription(messages, self.notes.invalidate)
        caps = self.wire.capabilities
        if caps.stream is None:
            raise ClientError(
                f"cannot subscribe: this {caps.kind} transport declares no listen streams "
                f"(capabilities.stream); poll the lists instead"
            )
        again = reopen and caps.reopens_streams
        stream = caps.stream
        return listen_stream(
            self.session, stream, wanted, self.notes.invalidate, again, self.timeout
        )

    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
    ) -> AsyncIterator[Notification]:
        """Change notifications until the caller stops iterating (which ends the stream)."""
        async with self.subscribe(
            tools=tools, prompts=prompts, resources=resources, resource_uris=resource_uris
        ) as sub:
            async for note in sub:
                yield note


__all__ = ["ERA_CACHE", "Client"]
