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
import itertools
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from types import EllipsisType, TracebackType
from typing import TYPE_CHECKING, Any, Literal

from ..protocol.errors import (
    HEADER_MISMATCH,
    MCPError,
)
from ..protocol.jsonrpc import JSONObject, Notification
from ..protocol.meta import LOG_LEVEL_RANK
from ..protocol.tasks import TASK_AUGMENTED_METHODS, TASKS_EXTENSION
from ..protocol.versions import META_LOG_LEVEL
from .cache import ResultCache
from .connect import Era, era_cache_key, make_client_transport
from .era import ERA_CACHE, probe_modern, server_info
from .errors import ClientError, InvalidResponse
from .http_headers import CALL_HEADERS
from .inputs import ElicitationHandler, InputHandlers, RootsProvider, SamplingHandler
from .notifications import LogCallback, NotificationRouter, ProgressCallback
from .output_schema import OutputValidator
from .session import ClientSession, Trace
from .subscription import Subscription
from .tasks import follow_task
from .types import (
    CallResult,
    Completion,
    Prompt,
    PromptResult,
    ReadResult,
    Resource,
    ResourceTemplate,
    ServerInfo,
    Tool,
)

if TYPE_CHECKING:
    from ..auth.oauth import OAuth
    from .legacy import LegacySession

log = logging.getLogger("mcpkit.client")

_MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
_MCP_HEADERS = ("mcp-protocol-version", "mcp-method", "mcp-name", "mcp-param-", "mcp-session-id")


class Client:
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
    ) -> None:
        """`auth`: an `mcpkit.auth.OAuth` for servers that answer 401 (HTTP only; a stdio
        server takes credentials from its environment, `env`, as the spec says: BASE-31).
        `tasks`: declare the tasks extension, so that servers may run long tool calls as tasks;
        `call_tool` follows a task to its result either way it is answered.
        `extensions`: more extensions to declare (id → settings, VER-07), e.g. MCP Apps.
        `trace`: sees every JSON-RPC message as sent or received (`"send"`/`"recv"`), for
        inspectors; it must not block.
        `log_level` ("debug" ... "emergency"): ask for the server's log messages at or above it
        on every request (`io.modelcontextprotocol/logLevel`, LOG-03/04; `logging/setLevel` on
        a 2025-11-25 session); they reach `on_log`. None: modern servers send none."""
        if log_level is not None and log_level not in LOG_LEVEL_RANK:
            raise ValueError(f"log_level must be one of {', '.join(LOG_LEVEL_RANK)}")
        self.handlers = InputHandlers(elicitation, sampling, roots, url_elicitation=url_elicitation)
        self.cache = ResultCache() if cache else None
        self.notes = NotificationRouter(self.cache, on_log, on_notification)
        self.trace = trace
        #: Extensions declared besides tasks (the legacy `initialize` carries these too).
        self.extensions: JSONObject = dict(extensions or {})
        self.transport, self._era_key = make_client_transport(
            target,
            headers=headers,
            env=env,
            cwd=cwd,
            stderr=stderr,
            on_notification=self.notes if trace is None else self._traced,
            auth=auth,
        )
        self.requested_era = era
        self.timeout = timeout
        self.max_input_rounds = max_input_rounds
        self.probe_timeout = probe_timeout
        capabilities = self.handlers.capabilities()
        declared = {**({TASKS_EXTENSION: {}} if tasks else {}), **(extensions or {})}
        if declared:
            capabilities["extensions"] = declared  # TASK-01, per request
        self.session = ClientSession(
            self.transport, timeout=timeout, capabilities=capabilities, client_info=client_info
        )
        self.session.trace = trace
        self.session.log_level = log_level
        self.legacy: LegacySession | None = None
        self.info: ServerInfo | None = None
        self._headers_key = hashlib.sha256(
            repr(sorted((headers or {}).items())).encode()
        ).hexdigest()[:16]
        self._tokens = itertools.count(1)
        self._tools: dict[str, Tool] = {}
        self._outputs = OutputValidator()

    # -- connection ------------------------------------------------------------------------
    async def __aenter__(self) -> Client:
        try:
            await self.connect()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def _auth_key(self) -> str:
        """Private cache entries belong to the credentials in use (CACHE-11)."""
        auth = getattr(self.transport, "auth", None)
        if auth is None:
            return self._headers_key
        return self._headers_key + auth.cache_key()  # type: ignore[no-any-return]

    @property
    def era(self) -> Era | None:
        return self.info.era if self.info is not None else None  # type: ignore[return-value]

    async def connect(self) -> ServerInfo:
        await self.transport.start()
        era = (
            self.requested_era
            if self.requested_era != "auto"
            else ERA_CACHE.get(self._era_key, "auto")
        )
        if era in ("auto", "modern"):
            info = await probe_modern(
                self.session, strict=era == "modern", timeout=self.probe_timeout
            )
            if info is not None:
                self.info = info
                ERA_CACHE[self._era_key] = "modern"
                return info
        from .legacy import LegacySession

        self.legacy = LegacySession(
            self.transport,
            self.handlers,
            self.session.client_info,
            on_notification=self.notes if self.trace is None else self._traced,
            extensions=self.extensions,
            trace=self.trace,
        )
        self.info = await self.legacy.initialize(self.timeout)
        ERA_CACHE[self._era_key] = "legacy"
        if self.session.log_level is not None and "logging" in self.info.capabilities:
            await self.legacy.request(
                "logging/setLevel", {"level": self.session.log_level}, timeout=self.timeout
            )
        return self.info

    async def _traced(self, note: Notification) -> None:
        if self.trace is not None:
            self.trace("recv", {"jsonrpc": "2.0", "method": note.method, "params": note.params})
        await self.notes(note)

    async def close(self) -> None:
        if self.legacy is not None:
            await self.legacy.close()
        await self.transport.close()

    # -- requests --------------------------------------------------------------------------
    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | EllipsisType | None = ...,
        progress: ProgressCallback | None = None,
        use_cache: bool = True,
        log_level: str | None = None,
        raw: bool = False,
    ) -> JSONObject:
        """Any request; fulfils input the server asks for; returns the final result object.
        `log_level` overrides the client's for this request. `raw`: return the server's first
        answer as it is, `input_required` or `task` included (for a proxy that passes it on;
        a legacy session's real requests still go to the input handlers)."""
        body: JSONObject = dict(params or {})
        if log_level is not None:
            if log_level not in LOG_LEVEL_RANK:
                raise ValueError(f"log_level must be one of {', '.join(LOG_LEVEL_RANK)}")
            body["_meta"] = {**(body.get("_meta") or {}), META_LOG_LEVEL: log_level}
        cache = self.cache if use_cache else None
        if cache is not None:
            hit = cache.get(method, body, self._auth_key)
            if hit is not None:
                return hit  # type: ignore[no-any-return]
        token = None
        if progress is not None:
            token = f"mcpkit-{next(self._tokens)}"
            self.notes.progress[token] = progress
            body["_meta"] = {**(body.get("_meta") or {}), "progressToken": token}
        try:
            if self.legacy is not None:
                result = await self.legacy.request(
                    method, body, timeout=self.timeout if timeout is ... else timeout
                )
            elif raw:
                result = await self.session.request(method, body, timeout=timeout)
            else:
                result = await self._modern(method, body, timeout)
        finally:
            if token is not None:
                self.notes.progress.pop(token, None)
        if cache is not None:
            cache.put(method, body, self._auth_key, result)
        return result

    async def _modern(
        self, method: str, params: JSONObject, timeout: float | EllipsisType | None
    ) -> JSONObject:
        original = params
        for _ in range(self.max_input_rounds + 1):
            result = await self.session.request(method, params, timeout=timeout)
            kind = result.get("resultType")
            if kind == "task":
                if method not in TASK_AUGMENTED_METHODS:
                    raise InvalidResponse(f"{method} cannot be answered with a task (TASK-04)")
                return await follow_task(result, self.session.request, self.handlers.fulfil)
            if kind != "input_required":
                return result
            if method not in _MRTR_METHODS:
                raise InvalidResponse(f"{method} cannot answer input_required (MRTR-04)")
            requests = result.get("inputRequests") or {}
            if not isinstance(requests, dict):
                raise InvalidResponse("inputRequests is not an object")
            # MRTR-16/17/19/22: all answers, the original params, the state byte for byte.
            params = {**original, "inputResponses": await self.handlers.fulfil(requests)}
            if "requestState" in result:
                params["requestState"] = result["requestState"]
        raise ClientError(f"{method} still needs input after {self.max_input_rounds} rounds")

    # -- typed API -------------------------------------------------------------------------
    async def discover(self) -> ServerInfo:
        if self.legacy is not None:
            assert self.info is not None
            return self.info
        self.info = server_info(
            await self.request("server/discover"), self.session.protocol_version
        )
        return self.info

    async def list_page(
        self, method: str, key: str, cursor: str | None = None
    ) -> tuple[list[JSONObject], str | None]:
        """One page of a list (`nextCursor` is opaque: PAG-05)."""
        result = await self.request(method, {"cursor": cursor} if cursor is not None else None)
        page = result.get(key)
        if not isinstance(page, list):
            raise InvalidResponse(f"{method} result has no {key!r} list")
        items = [i for i in page if isinstance(i, dict)]
        if method == "tools/list":
            items = self.transport.accept_tools(items)  # TR-XMH-07
        nxt = result.get("nextCursor")
        return items, nxt if isinstance(nxt, str) else None

    async def _list_all(self, method: str, key: str) -> list[JSONObject]:
        items, cursor = await self.list_page(method, key)
        seen: set[str] = set()
        while cursor is not None:
            if cursor in seen:
                raise InvalidResponse(f"{method} repeated the cursor {cursor!r}")
            seen.add(cursor)
            page, cursor = await self.list_page(method, key, cursor)
            items += page
        return items

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
        meta: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        log_level: str | None = None,
    ) -> CallResult:
        """`meta`: extra `_meta` keys of this call (keep to your own prefixes: BASE-43).
        `headers`: extra HTTP headers of this call (Streamable HTTP only; not the MCP ones).
        `log_level`: the server's log messages of this call at or above it reach `on_log`
        (LOG-03/04); None uses the client's `log_level`."""
        mirrored = [h for h in headers or () if h.lower().startswith(_MCP_HEADERS)]
        if mirrored:
            raise ValueError(f"headers {mirrored} are set by the transport (TR-HDR-12)")
        params: JSONObject = {"name": name, "arguments": dict(arguments or {})}
        if meta:
            params["_meta"] = dict(meta)
        token = CALL_HEADERS.set({**CALL_HEADERS.get(), **headers}) if headers else None
        try:
            return await self._call_tool(name, params, timeout, progress, log_level)
        finally:
            if token is not None:
                CALL_HEADERS.reset(token)

    async def _call_tool(
        self,
        name: str,
        params: JSONObject,
        timeout: float | EllipsisType | None,
        progress: ProgressCallback | None,
        log_level: str | None,
    ) -> CallResult:
        try:
            raw = await self.request(
                "tools/call",
                params,
                timeout=timeout,
                progress=progress,
                use_cache=False,
                log_level=log_level,
            )
        except MCPError as exc:
            if exc.code != HEADER_MISMATCH or self.legacy is not None:
                raise
            await self.list_tools()  # TR-XMH-12: the x-mcp-header set may have changed
            raw = await self.request(
                "tools/call",
                params,
                timeout=timeout,
                progress=progress,
                use_cache=False,
                log_level=log_level,
            )
        result = CallResult.from_wire(raw)
        tool = self._tools.get(name)
        if tool is not None and tool.output_schema is not None and not result.is_error:
            self._outputs.check(tool, result.structured_content)  # TOOL-18
        return result

    async def list_resources(self) -> list[Resource]:
        return [Resource.from_wire(r) for r in await self._list_all("resources/list", "resources")]

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        items = await self._list_all("resources/templates/list", "resourceTemplates")
        return [ResourceTemplate.from_wire(t) for t in items]

    async def read_resource(
        self, uri: str, *, timeout: float | EllipsisType | None = ...
    ) -> ReadResult:
        raw = await self.request("resources/read", {"uri": uri}, timeout=timeout)
        contents = raw.get("contents")
        return ReadResult(
            [c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else [], raw
        )

    async def list_prompts(self) -> list[Prompt]:
        return [Prompt.from_wire(p) for p in await self._list_all("prompts/list", "prompts")]

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> PromptResult:
        params: JSONObject = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        raw = await self.request("prompts/get", params, use_cache=False)
        messages = raw.get("messages")
        return PromptResult(
            raw.get("description"), messages if isinstance(messages, list) else [], raw
        )

    async def complete(
        self, ref: JSONObject, argument: str, value: str, context: Mapping[str, str] | None = None
    ) -> Completion:
        params: JSONObject = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": dict(context)}
        raw = await self.request("completion/complete", params, use_cache=False)
        c = raw.get("completion") or {}
        return Completion(
            [str(v) for v in c.get("values") or []], c.get("total"), bool(c.get("hasMore")), raw
        )

    def subscribe(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
    ) -> Subscription:
        """A `subscriptions/listen` stream: `async with client.subscribe(tools=True) as sub:`."""
        wanted: JSONObject = {}
        if tools:
            wanted["toolsListChanged"] = True
        if prompts:
            wanted["promptsListChanged"] = True
        if resources:
            wanted["resourcesListChanged"] = True
        if resource_uris:
            wanted["resourceSubscriptions"] = list(resource_uris)
        if self.legacy is not None:
            messages = self.legacy.listen(wanted)
        else:
            params = {"notifications": wanted, "_meta": self.session.request_meta()}
            stream = self.transport.stream  # type: ignore[attr-defined]
            request_id = self.session.next_id()
            messages = stream(request_id, "subscriptions/listen", params)
            if self.trace is not None:
                self.trace(
                    "send",
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "method": "subscriptions/listen",
                        "params": params,
                    },
                )
        if self.trace is not None:
            messages = _trace_stream(messages, self.trace)
        return Subscription(messages, self.notes.invalidate)

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


async def _trace_stream(
    messages: AsyncIterator[JSONObject], trace: Trace
) -> AsyncIterator[JSONObject]:
    try:
        async for message in messages:
            trace("recv", {"jsonrpc": "2.0", **message})
            yield message
    finally:
        close = getattr(messages, "aclose", None)
        if close is not None:
            await close()


__all__ = ["ERA_CACHE", "Client", "era_cache_key"]
