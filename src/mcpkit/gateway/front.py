"""`Front`: backends served as one MCP server. `proxy()` is a front over one backend with the
names it has; `Gateway` is a front over a fleet with namespaced names and the host's rules.

The front is an ordinary `Server` whose registries mirror the backends' catalogues (rebuilt
when a backend changes, goes down or comes back, then announced as list_changed), so both
eras, pagination, scopes, caching hints, listen streams and tasks work as they do for local
tools. Calls, prompts, reads and completions are forwarded (`forward.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

from ..client import ClientError
from ..host.backoff import Backoff
from ..host.config import ServerConfig
from ..host.deadlines import Clock, DeadlineExceeded, within
from ..host.link import ServerLink
from ..host.pipeline import ToolPins
from ..host.records import RecordStore
from ..host.supervision import StateChange
from ..protocol.errors import InternalError, MCPError
from ..server.caching import CacheHint
from ..server.context import Context
from ..server.prefixes import with_ui_uri
from ..server.server import Lifespan, Server
from .failures import BackendLost, call_failure
from .forward import failed, forward, forwarded, own_result
from .lazy import LazyBackend
from .link import UpstreamLink, narrowest
from .reads import read
from .remote import RemotePrompt, RemoteResource, RemoteTemplate, RemoteTool, header_params

log = logging.getLogger("mcpkit.gateway")

_LIST_NOTES = {
    "tools/list": "notifications/tools/list_changed",
    "prompts/list": "notifications/prompts/list_changed",
    "resources/list": "notifications/resources/list_changed",
    "resources/templates/list": "notifications/resources/list_changed",
}
#: The longest a front list is cached for (a backend may say less, never more).
LIST_TTL_MS = 60_000


class Front(Server):
    """A server whose tools, prompts and resources are its backends'."""

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        startup_timeout: float | None = 5.0,
        lifespan: Lifespan | None = None,
        **options: Any,
    ) -> None:
        if "idempotency" not in options:
            # A repeated call with the same key (and caller) runs once through the front too.
            from ..server.idempotency import MemoryIdempotencyStore

            options["idempotency"] = MemoryIdempotencyStore()
        super().__init__(name, version, lifespan=self._serving, **options)
        self.links: dict[str, UpstreamLink] = {}
        self.startup_timeout = startup_timeout
        self._own_lifespan = lifespan
        # Backends come and go, the front's tasks stay: once it ran tasks, `tasks/*` stays
        # answered (a task whose backend died reads `failed`, not "method not found").
        self.keeps_tasks = True
        self.set_method("resources/read", read)
        self.completer = self._complete
        # A read's hints are the backend's own (never widened); lists get the narrowest.
        self.cache.pop("resources/read", None)
        self._shown: dict[str, list[dict[str, Any]]] = {}

    # -- backends -----------------------------------------------------------------------
    def add_backend(
        self,
        config: ServerConfig,
        *,
        target: Any = None,
        pins: ToolPins | None = None,
        restart: Backoff | None = None,
        era: str = "auto",
        records: RecordStore | None = None,
    ) -> UpstreamLink:
        """`records`: where a lazy backend's (`"start": "lazy"`) records are kept."""
        options: dict[str, Any] = {}
        kind: type[UpstreamLink] = UpstreamLink
        if config.start == "lazy":
            kind, options["store"] = LazyBackend, records
        link = kind(
            config,
            pins=pins,
            restart=restart,
            on_change=self._link_changed,
            on_catalog=self._catalog_changed,
            on_update=self._resource_updated,
            era=era,
            target=target,
            **options,
        )
        self.links[config.name] = link
        return link

    def offered(self) -> list[UpstreamLink]:
        """The backends whose catalogue the front mirrors: those up, and lazy ones not
        running (offered from their records)."""
        return [link for link in self.links.values() if link.up or link.idle]

    @asynccontextmanager
    async def _serving(self, server: Server) -> AsyncIterator[Any]:
        """Serving starts: connect every backend at once, wait up to `startup_timeout` for
        them (late ones join when they answer), then the user's lifespan."""
        for link in self.links.values():
            link.start()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.startup_timeout):
                await asyncio.gather(*(link.settled() for link in self.links.values()))
        self.rebuild()
        try:
            if self._own_lifespan is None:
                yield None
            else:
                async with self._own_lifespan(server) as state:
                    yield state
        finally:
            await asyncio.gather(*(link.close() for link in self.links.values()))

    def _link_changed(self, link: ServerLink, change: StateChange) -> None:
        self.rebuild()  # the link logs the change itself

    def _catalog_changed(self, link: UpstreamLink, method: str) -> None:
        self.rebuild()

    def _resource_updated(self, link: UpstreamLink, uri: str) -> None:
        self.notify_resource_updated(self.front_uri(link, uri))

    # -- naming (the gateway overrides these) -------------------------------------------
    def name_items(self, kind: str, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """Front names of (backend, tool or prompt name) pairs."""
        return {pair: pair[1] for pair in pairs}

    def front_uri(self, link: UpstreamLink, uri: str) -> str:
        return uri

    def route_uri(self, uri: str) -> tuple[UpstreamLink, str] | None:
        """The backend of a front URI, and the URI there."""
        links = self.offered()
        return (links[0], uri) if len(links) == 1 else None

    def scopes_for(self, link: UpstreamLink, kind: str, name: str) -> frozenset[str]:
        """Scopes a caller's token needs to see and use one item."""
        return frozenset()

    def tool_definition(self, link: UpstreamLink, definition: dict[str, Any]) -> dict[str, Any]:
        """The definition the front shows for a backend tool (already renamed)."""
        return definition

    # -- the catalogue ------------------------------------------------------------------
    def rebuild(self) -> None:
        """Mirror the catalogues of the backends offered; announce what changed."""
        up = self.offered()
        shared = [link for link in up if not self.listed_per_caller(link)]
        tools, prompts = self._mirror_tools(shared), self._mirror_prompts(up)
        resources: dict[str, Any] = {}
        templates: list[Any] = []
        for link in up:
            for d in link.catalog.resources:
                remote = str(d.get("uri"))
                uri = self.front_uri(link, remote)
                scopes = self.scopes_for(link, "resource", remote)
                resources[uri] = RemoteResource(link, remote, {**d, "uri": uri}, scopes=scopes)
            for d in link.catalog.templates:
                remote = str(d.get("uriTemplate"))
                uri = self.front_uri(link, remote)
                scopes = self.scopes_for(link, "resource", remote)
                templates.append(
                    RemoteTemplate(link, remote, {**d, "uriTemplate": uri}, scopes=scopes)
                )
        self.instructions = self.combined_instructions(up)
        self._hints(up)
        self.list_cache.clear()
        changed = [
            notify
            for notify, key, items in (
                (self.notify_tools_changed, "tools", tools.values()),
                (self.notify_prompts_changed, "prompts", prompts.values()),
                (self.notify_resources_changed, "resources", resources.values()),
                (self.notify_resources_changed, "templates", templates),
            )
            if self._differs(key, items)
        ]
        self.tools.clear()
        self.tools.update(tools)
        self.prompts.clear()
        self.prompts.update(prompts)
        self.resources.clear()
        self.resources.update(resources)
        self.templates[:] = templates
        for notify in dict.fromkeys(changed):
            notify()  # the flags follow the new registries; listeners hear list_changed

    def _named(
        self,
        kind: str,
        up: list[UpstreamLink],
        listed: Callable[[UpstreamLink], list[dict[str, Any]]],
    ) -> Iterator[tuple[UpstreamLink, dict[str, Any], str, str]]:
        """Each backend tool or prompt (`kind`) with its own name and its collision-free
        front name."""
        pairs = [(link.name, str(d["name"])) for link in up for d in listed(link)]
        names = self.name_items(kind, pairs)
        for link in up:
            for d in listed(link):
                remote = str(d["name"])
                yield link, d, remote, names[(link.name, remote)]

    def listed_per_caller(self, link: UpstreamLink) -> bool:
        """The backend's tools are listed for each caller (`per_caller.py`), not shared."""
        return False

    def mirror_own(
        self, links: list[UpstreamLink], lists: dict[str, list[dict[str, Any]]]
    ) -> dict[str, RemoteTool]:
        """One caller's tools of the backends in `links` (`lists`: each one's definitions
        listed for that caller), named beside the shared tools."""
        shared = [link for link in self.offered() if not self.listed_per_caller(link)]

        def listed(link: UpstreamLink) -> list[dict[str, Any]]:
            return lists.get(link.name, link.catalog.tools)

        tools = self._mirror_tools([*shared, *links], listed)
        return {name: tool for name, tool in tools.items() if tool.link.name in lists}

    def _mirror_tools(
        self,
        up: list[UpstreamLink],
        listed: Callable[[UpstreamLink], list[dict[str, Any]]] | None = None,
    ) -> dict[str, Any]:
        """The front's tools: each backend tool under its collision-free name."""
        tools: dict[str, Any] = {}
        for link, d, remote, name in self._named("tool", up, listed or _tools):
            headers = header_params(d)
            if headers is None:
                continue
            schema = d.get("inputSchema")
            properties = schema.get("properties") if isinstance(schema, dict) else None
            definition = with_ui_uri({**d, "name": name}, partial(self.front_uri, link))
            tools[name] = RemoteTool(
                link,
                remote,
                self.tool_definition(link, definition),
                self._call_tool,
                headers=headers,
                scopes=self.scopes_for(link, "tool", remote),
                accepts=frozenset(properties) if isinstance(properties, dict) else frozenset(),
                tasks=link.serves_tasks,
            )
        return tools

    def _mirror_prompts(self, up: list[UpstreamLink]) -> dict[str, Any]:
        """The front's prompts: each backend prompt under its collision-free name."""
        return {
            name: RemotePrompt(
                link,
                remote,
                {**d, "name": name},
                self._get_prompt,
                scopes=self.scopes_for(link, "prompt", remote),
            )
            for link, d, remote, name in self._named("prompt", up, _prompts)
        }

    def _differs(self, key: str, items: Iterable[Any]) -> bool:
        definitions = [item.definition for item in items]
        before = self._shown.get(key)
        self._shown[key] = definitions
        return before != definitions

    def _hints(self, up: list[UpstreamLink]) -> None:
        """Each list's hint: never longer or wider than any backend's (CACHE-10/11)."""
        for method in _LIST_NOTES:
            hint = CacheHint(LIST_TTL_MS, "public")
            for link in up:
                own = link.catalog.hints.get(method)
                if own is not None:
                    hint = narrowest(hint, {"ttlMs": own.ttl_ms, "cacheScope": own.scope})
            self.cache[method] = hint

    def combined_instructions(self, up: list[UpstreamLink]) -> str | None:
        texts = [link.instructions for link in up if link.instructions]
        return "\n\n".join(texts) if texts else None

    def capabilities(self) -> dict[str, Any]:
        """Tools, prompts and resources always (backends come and go: listChanged says so);
        completions when a backend has them."""
        caps = super().capabilities()
        caps.setdefault("tools", {"listChanged": True})
        caps.setdefault("prompts", {"listChanged": True})
        caps.setdefault("resources", {"subscribe": True, "listChanged": True})
        if not any("completions" in link.capabilities for link in self.links.values() if link.up):
            caps.pop("completions", None)
        return caps

    # -- calls --------------------------------------------------------------------------
    async def _call_tool(
        self, tool: RemoteTool, arguments: dict[str, Any], ctx: Context | None
    ) -> dict[str, Any]:
        """A proxy's call, under its deadline (a gateway's runs through its chain instead)."""
        assert ctx is not None
        link = tool.link
        deadline = link.config.deadline(tool.remote)
        try:
            result = await within(
                deadline, lambda clock: self.forward_call(tool, arguments, ctx, clock=clock)
            )
        except BackendLost as exc:
            raise exc.error from None
        except (ClientError, DeadlineExceeded) as exc:
            link.report(exc)
            return failed(ctx, call_failure(tool.name, link, exc))
        except MCPError:
            link.healthy()
            raise
        link.healthy()
        return self.shape_result(link, own_result("tools/call", result), ctx)

    async def forward_call(
        self,
        tool: RemoteTool,
        arguments: dict[str, Any],
        ctx: Context,
        meta: dict[str, Any] | None = None,
        *,
        clock: Clock | None = None,
    ) -> dict[str, Any]:
        """One tool call on its backend under `clock`; raises what the forwarding raises."""
        params = {"name": tool.remote, "arguments": arguments}
        return await forward(tool.link, "tools/call", params, ctx, meta=meta, clock=clock)

    def shape_result(
        self, link: UpstreamLink, result: dict[str, Any], ctx: Context
    ) -> dict[str, Any]:
        """A backend's result as the front shows it."""
        return result

    async def _get_prompt(
        self, prompt: RemotePrompt, arguments: dict[str, Any], ctx: Context | None
    ) -> dict[str, Any]:
        assert ctx is not None
        params = {"name": prompt.remote, "arguments": arguments}
        result = await forwarded(prompt.link, "prompts/get", params, ctx)
        return self.shape_result(prompt.link, result, ctx)

    async def _complete(
        self, ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]
    ) -> Any:
        link: UpstreamLink | None = None
        inner = dict(ref)
        if ref.get("type") == "ref/prompt":
            prompt = self.prompts.get(str(ref.get("name")))
            if isinstance(prompt, RemotePrompt):
                link, inner["name"] = prompt.link, prompt.remote
        else:
            uri = str(ref.get("uri"))
            for entry in [*self.templates, self.resources.get(uri)]:
                if isinstance(entry, RemoteTemplate | RemoteResource) and (
                    entry.definition.get("uriTemplate", entry.definition.get("uri")) == uri
                ):
                    link, inner["uri"] = entry.link, entry.remote
                    break
        if link is None or link.client is None or "completions" not in link.capabilities:
            return []
        params: dict[str, Any] = {"ref": inner, "argument": argument}
        if context:
            params["context"] = {"arguments": context}
        try:
            result = await link.client.request("completion/complete", params, use_cache=False)
        except ClientError as exc:
            link.report(exc)
            raise InternalError(f"The {link.name!r} server could not complete: {exc}") from None
        completion = result.get("completion")
        return completion if isinstance(completion, dict) else []


def _tools(link: UpstreamLink) -> list[dict[str, Any]]:
    return link.catalog.tools


def _prompts(link: UpstreamLink) -> list[dict[str, Any]]:
    return link.catalog.prompts
