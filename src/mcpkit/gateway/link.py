"""One backend behind the gateway: the host's supervised `ServerLink` (connect, watch, reconnect
with backoff, pins), listing every primitive instead of only tools, listening for every change,
and answering the backend's own questions through the front call that caused them.

The catalogue (`Catalog`) is what the front mirrors: tool definitions that passed the pins,
resources, templates and prompts, the backend's instructions, and the narrowest caching hint
each list carried (the gateway never widens one: CACHE-10/11).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ..client import Client, ClientError
from ..client.inputs import Elicitation
from ..client.stdio import StdioTransport
from ..host.auth_config import oauth_for
from ..host.backoff import Backoff
from ..host.config import ServerConfig
from ..host.conversation import ToolResult
from ..host.link import ServerLink
from ..host.pipeline import ConsentPolicy, Decision, PendingCall, ToolPins
from ..host.records import LISTS as _LISTS
from ..host.screening.catalogue import DefinitionScreen
from ..host.supervision import StateChange
from ..protocol.errors import MCPError, MethodNotFound
from ..protocol.tasks import TASKS_EXTENSION
from ..server.caching import CacheHint
from ..server.context import Context
from .failures import Unavailable
from .inputs import Bridges
from .shapes import repaired_tool

log = logging.getLogger("mcpkit.gateway")

#: The front call being forwarded in this task: the backend's log messages go to its client.
CURRENT_CALL: ContextVar[Context | None] = ContextVar("mcpkit_gateway_call", default=None)
#: Sessions of their own that a 2025-11-25 backend keeps open, one per front caller.
MAX_SESSIONS = 64
#: At most this many listed resources are watched for `notifications/resources/updated`.
MAX_WATCHED_RESOURCES = 1000


@dataclass(slots=True)
class Catalog:
    tools: list[dict[str, Any]] = field(default_factory=list)
    resources: list[dict[str, Any]] = field(default_factory=list)
    templates: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    #: The narrowest hint of each list method's pages.
    hints: dict[str, CacheHint] = field(default_factory=dict)


class LogUI:
    """The gateway has no terminal: what a host would show goes to the log; nobody is asked."""

    def user(self, text: str) -> None: ...

    def assistant(self, text: str) -> None: ...

    def tool_call(self, call: PendingCall, decision: Decision) -> None: ...

    async def confirm(self, call: PendingCall) -> bool:
        return False

    def tool_result(self, call: PendingCall, result: ToolResult) -> None: ...

    def progress(
        self, call: PendingCall, progress: float, total: float | None, message: str | None
    ) -> None: ...

    async def elicit(self, server: str, request: Elicitation) -> dict[str, Any]:
        return {"action": "decline"}

    def server_state(self, change: StateChange) -> None:
        log.info("%s", change.describe())

    def warn(self, text: str) -> None:
        log.warning("%s", text)

    def info(self, text: str) -> None:
        log.info("%s", text)


class UpstreamLink(ServerLink):
    """A supervised backend whose whole catalogue is mirrored by a gateway or proxy."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        pins: ToolPins | None = None,
        restart: Backoff | None = None,
        on_change: Callable[[ServerLink, StateChange], None] | None = None,
        on_catalog: Callable[[UpstreamLink, str], None] | None = None,
        on_update: Callable[[UpstreamLink, str], None] | None = None,
        era: str = "auto",
        target: Any = None,
    ) -> None:
        """`target`: what the client connects to instead of the config's (an in-process
        `Server`)."""
        super().__init__(
            config, LogUI(), ConsentPolicy(), None, pins, restart=restart, on_change=on_change
        )
        self.era = era
        self.target = target
        self.catalog = Catalog()
        self.capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.bridges = Bridges()
        self._sessions: OrderedDict[str, tuple[Client, Bridges]] = OrderedDict()
        self._closing: set[asyncio.Task[None]] = set()
        #: Tools withheld for a definition no client can accept, warned about once each.
        self._invalid: set[tuple[str, str | None]] = set()
        #: Content checks of the definitions (hidden characters removed, findings warned once).
        self.screen = DefinitionScreen(self.ui.warn)
        #: Called with the list method whose catalogue changed, and with updated resource URIs.
        self.on_catalog = on_catalog
        self.on_update = on_update

    def client_options(self, bridges: Bridges) -> dict[str, Any]:
        """How the gateway talks to this backend: the backend's questions go to the front
        call they belong to (through `bridges`), its log messages to the call's client."""

        async def ask(method: str, params: dict[str, Any]) -> Any:
            return await bridges.current().ask(method, params)

        async def elicitation(request: Elicitation) -> dict[str, Any]:
            return await ask("elicitation/create", request.raw)  # type: ignore[no-any-return]

        async def sampling(params: dict[str, Any]) -> dict[str, Any]:
            return await ask("sampling/createMessage", params)  # type: ignore[no-any-return]

        async def roots() -> list[Any]:
            if bridges.attributed() is None:
                # Asked at start-up or between calls, with no front client to ask: the gateway
                # exposes no roots of its own (ROOT-04/05: the backend copes with none).
                return []
            answer = await ask("roots/list", {})
            listed = answer.get("roots") if isinstance(answer, dict) else None
            return listed if isinstance(listed, list) else []

        return dict(
            elicitation=elicitation,
            sampling=sampling,
            roots=roots,
            url_elicitation=True,
            era=self.era,
            timeout=self.config.timeout,
            connect_timeout=self.config.start_deadline,
            stderr="capture",
            auth=oauth_for(self.config, interactive=False),
            on_log=_route_log,
        )

    @property
    def serves_tasks(self) -> bool:
        """The backend serves the tasks extension (a legacy one never does)."""
        extensions = self.capabilities.get("extensions")
        return isinstance(extensions, dict) and TASKS_EXTENSION in extensions

    def _target(self) -> Any:
        return self.target if self.target is not None else self.config.client_target()

    async def _open(self) -> None:
        client = Client(self._target(), **self.client_options(self.bridges))
        self.client = client
        await client.__aenter__()
        info = client.info
        self.capabilities = dict(info.capabilities) if info is not None else {}
        self.instructions = info.instructions if info is not None else None
        await self._list()
        self._lost = asyncio.get_running_loop().create_future()
        if any((self.capabilities.get(k) or {}) for k in ("tools", "prompts", "resources")):
            self._watchers.append(asyncio.create_task(self._listen(client)))
        if isinstance(client.transport, StdioTransport):
            self._watchers.append(asyncio.create_task(self._watch_process(client.transport)))

    async def client_for(self, principal: str | None) -> tuple[Client, Bridges]:
        """The connection a call of `principal` goes over. A 2025-11-25 backend binds state
        to its session, so each front caller gets a session of their own there (opened on
        first use with the call's credentials, at most `MAX_SESSIONS`, the least recently
        used closed first); a 2026-07-28 backend keeps no session: one connection for all."""
        client = self.client
        if client is None or not self.up:
            raise Unavailable(self.name)
        if client.legacy is None or principal is None:
            return client, self.bridges
        entry = self._sessions.pop(principal, None)
        if entry is None:
            bridges = Bridges()
            own = Client(self._target(), **{**self.client_options(bridges), "era": "legacy"})
            try:
                await own.__aenter__()
            except (MCPError, ClientError, OSError) as exc:
                self.report(exc)
                raise
            entry = (own, bridges)
            while len(self._sessions) >= MAX_SESSIONS:
                _, (old, old_bridges) = self._sessions.popitem(last=False)
                old_bridges.close()
                closing = asyncio.create_task(old.close())
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
        self._sessions[principal] = entry  # most recently used last
        return entry

    async def _drop(self) -> None:
        self.bridges.close()
        self.bridges = Bridges()
        sessions, self._sessions = self._sessions, OrderedDict()
        for own, bridges in sessions.values():
            bridges.close()
            with contextlib.suppress(Exception):
                await own.close()
        await super()._drop()
        self.catalog = Catalog()

    # -- the catalogue ------------------------------------------------------------------
    async def _list(self, only: str | None = None) -> None:
        assert self.client is not None
        for method, key, capability in _LISTS:
            if only is not None and method != only:
                continue
            if capability not in self.capabilities:
                continue
            try:
                items, hint = await self._list_all(method, key)
            except MethodNotFound:
                # A backend may declare resources and serve only one of their lists (or none):
                # what it does not serve is empty, not a failure to reconnect over.
                log.debug("server %r does not serve %s: listed as empty", self.name, method)
                items = []
                self.catalog.hints.pop(method, None)
            else:
                self.catalog.hints[method] = hint
            if method == "tools/list":
                self._review(items)
            elif method == "resources/list":
                self.catalog.resources = items
            elif method == "resources/templates/list":
                self.catalog.templates = items
            else:
                self.catalog.prompts = items
        self.stale = False

    def _review(self, items: list[dict[str, Any]]) -> None:
        """The catalogue's tools: those `offer` lets through."""
        from ..client import Tool

        if self.pins is None:
            self.withheld = []
        self.catalog.tools = self.offer(items)
        self.tools = [Tool.from_wire(t) for t in self.catalog.tools]

    def offer(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The listed tools that may be offered: those that passed the pins (a changed or new
        definition is withheld until approved: `mcpkit pins approve` with the gateway's
        config, found again by `refresh_pins`), valid, and screened."""
        offered = items if self.pins is None else self.review(items).offered
        return [s.offered for s in self.screen.screen(self.name, self._valid(offered), ())]

    def _valid(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The tools a client can accept: schemas repaired where the intent is plain, the
        rest withheld with one warning each (TOOL-10: one bad tool never costs the list)."""
        valid = []
        for definition in tools:
            fixed, why = repaired_tool(definition)
            if fixed is not None:
                valid.append(fixed)
                continue
            name = definition.get("name")
            if (repr(name), why) not in self._invalid:
                self._invalid.add((repr(name), why))
                self.ui.warn(
                    f"server {self.name!r}: tool {name!r} is withheld: {why} (TOOL-10); "
                    "the server's maintainers can fix its definition"
                )
        return valid

    async def _list_all(self, method: str, key: str) -> tuple[list[dict[str, Any]], CacheHint]:
        assert self.client is not None
        items: list[dict[str, Any]] = []
        hint = CacheHint(2**31, "public")
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            result = await self.client.request(
                method, {"cursor": cursor} if cursor is not None else None, use_cache=False
            )
            page = result.get(key)
            page = [i for i in page if isinstance(i, dict)] if isinstance(page, list) else []
            accept = self.client.transport.capabilities.accept_tools  # TR-XMH-07
            items += accept(page) if key == "tools" and accept is not None else page
            hint = narrowest(hint, result)
            nxt = result.get("nextCursor")
            if not isinstance(nxt, str) or nxt in seen:
                return items, hint
            seen.add(nxt)
            cursor = nxt

    async def refresh_pins(self) -> None:
        """The pin file changed (an approval): review the tools again."""
        if self.up:
            try:
                await self._list("tools/list")
            except (MCPError, ClientError) as exc:
                self.report(exc)
            else:
                self._catalog_changed("tools/list")

    def _catalog_changed(self, method: str) -> None:
        if self.on_catalog is not None:
            self.on_catalog(self, method)

    async def _listen(self, client: Client) -> None:
        caps = self.capabilities
        uris = [str(r.get("uri")) for r in self.catalog.resources][:MAX_WATCHED_RESOURCES]
        subscribe = bool((caps.get("resources") or {}).get("subscribe")) and bool(uris)
        try:
            async with client.subscribe(
                tools=bool((caps.get("tools") or {}).get("listChanged")),
                prompts=bool((caps.get("prompts") or {}).get("listChanged")),
                resources=bool((caps.get("resources") or {}).get("listChanged")),
                resource_uris=uris if subscribe else (),
            ) as sub:
                async for note in sub:
                    await self._noticed(note.method, note.params or {})
        except asyncio.CancelledError:
            raise
        except (MCPError, ClientError) as exc:
            if self.lost_to(exc):
                return
        with contextlib.suppress(MCPError, ClientError):
            await client.request("tools/list" if "tools" in caps else "prompts/list")
            return
        self.lose("the change stream ended and the server does not answer")

    async def _noticed(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/resources/updated":
            uri = params.get("uri")
            if isinstance(uri, str) and self.on_update is not None:
                self.on_update(self, uri)
            return
        kind = method.split("/")[1] if method.count("/") == 2 else ""
        lists = {
            "tools": ("tools/list",),
            "prompts": ("prompts/list",),
            "resources": ("resources/list", "resources/templates/list"),
        }.get(kind, ())
        for listed in lists:
            try:
                await self._list(listed)
            except (MCPError, ClientError) as exc:
                self.report(exc)
                return
            self._catalog_changed(listed)


async def _route_log(level: str, data: Any, logger: str | None) -> None:
    """A backend's log message goes to the client of the front call it came with."""
    ctx = CURRENT_CALL.get()
    if ctx is not None:
        with contextlib.suppress(ValueError):
            await ctx.log(level, data, logger)


def narrowest(hint: CacheHint, result: dict[str, Any]) -> CacheHint:
    """`hint` narrowed by a result's own `ttlMs` / `cacheScope` (absent: 0 and private)."""
    ttl = result.get("ttlMs")
    ttl = ttl if type(ttl) is int and ttl >= 0 else 0
    scope = "public" if result.get("cacheScope") == "public" else "private"
    return CacheHint(
        min(hint.ttl_ms, ttl), "public" if hint.scope == scope == "public" else "private"
    )
