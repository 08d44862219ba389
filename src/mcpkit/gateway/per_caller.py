"""Backends listed per caller (`"listPerUser": true`): a backend that answers each user's
`tools/list` with their own tools (a `private` answer, CACHE-11) is listed with each caller's
`userHeaders`, and each caller sees only the tools listed for them.

- Access control first (CACHE-19): the front's auth has admitted the caller before any list or
  call reaches this module, and the scopes a tool needs filter the caller's list here as they
  do the front's other tools; nothing is looked up for a caller before that.
- A caller's tools of such a backend come from, in order: what was listed for that caller
  since the front's catalogue last changed (in memory, per principal); the record
  (`host/records.py`) the caller may be served (their own private one, or a public one: a
  public answer is the same for everyone and is shared); a listing made now with the caller's
  own headers (a lazy backend is started for it), saved as the caller's record. A record past
  its `ttlMs` is used only while the backend is not running (a stale catalogue, CACHE-07).
- Never another caller's: a private record is loaded only for its principal (`RecordStore`),
  the client's own response cache is not used for these lists, and the front's list cache is
  bypassed (each answer is built for its caller and says `cacheScope: "private"`).
- An anonymous caller has no identity to list with: such a backend lists no tools for them.

The front's tool registry (`CallerTools`) holds the shared tools and finds the calling
principal's own beside them, so calls, scopes and idempotency keys work on both alike.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..client import ClientError
from ..client.http_headers import CALL_HEADERS
from ..host.records import snapshot
from ..protocol.errors import MCPError
from ..server.admission import ServerRequest
from ..server.auth.access import AccessToken, current_access
from ..server.methods import Handler, answer_page
from .remote import RemoteTool
from .scoping import TemplateError, render_all

if TYPE_CHECKING:
    from ..server.server import Server
    from .gateway import Gateway
    from .link import UpstreamLink

log = logging.getLogger("mcpkit.gateway")

#: Callers whose tools are kept in memory at once (the others' are found again when asked).
MAX_CALLERS = 4096


def _caller() -> tuple[str | None, AccessToken | None]:
    access = current_access.get()
    return (access.principal if access is not None else None), access


class CallerTools(dict[str, Any]):
    """The front's tools: the shared ones (the dict itself) and, found beside them, the calling
    principal's own tools of backends listed per caller (`own()`)."""

    def __init__(self, own: Callable[[], Mapping[str, RemoteTool]]) -> None:
        super().__init__()
        self.own = own

    def get(self, name: str, default: Any = None) -> Any:
        found = super().get(name)
        return found if found is not None else self.own().get(name, default)

    def values(self) -> list[Any]:  # type: ignore[override]
        return [*super().values(), *self.own().values()]


class PerCaller:
    """The tools of a gateway's per-caller backends, per principal."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self._tools: dict[str | None, dict[str, RemoteTool]] = {}

    def links(self) -> list[UpstreamLink]:
        gateway = self.gateway
        return [link for link in gateway.offered() if gateway.rules(link).list_per_user]

    def current(self) -> Mapping[str, RemoteTool]:
        """The calling principal's own tools, as loaded (`load`) for this request."""
        return self._tools.get(_caller()[0], {})

    def clear(self) -> None:
        """The front's catalogue changed: each caller's tools are found again when asked."""
        self._tools.clear()

    async def load(self) -> None:
        """Find the calling principal's tools of every per-caller backend (once each, until
        the front's catalogue changes)."""
        principal, access = _caller()
        links = self.links()
        if principal in self._tools or not links:
            return
        found = await asyncio.gather(*(self._listed(link, principal, access) for link in links))
        lists = {link.name: tools for link, tools in zip(links, found, strict=True)}
        while len(self._tools) >= MAX_CALLERS:  # the earliest loaded go first (found again)
            self._tools.pop(next(iter(self._tools)))
        self._tools[principal] = self.gateway.mirror_own(links, lists)

    async def _listed(
        self, link: UpstreamLink, principal: str | None, access: AccessToken | None
    ) -> list[dict[str, Any]]:
        """`principal`'s tools at `link`: their record, or listed now with their headers."""
        store = self.gateway.records
        now = store.clock() if store is not None else 0.0
        record = store.load(link.config, principal) if store and principal is not None else None
        if record is not None and (record.fresh(now) or not link.up):
            return link.offer(record.tools)  # past its ttlMs: only while not running (CACHE-07)
        try:
            headers = render_all(self.gateway.rules(link).user_headers, access)
        except TemplateError:
            return []  # anonymous, or a token without what the headers need: no identity
        await link.wake()  # a lazy backend starts to list for this caller
        try:
            client, _ = await link.client_for(principal)
            token = CALL_HEADERS.set({**CALL_HEADERS.get(), **headers})
            try:
                with link.in_use():
                    made = await snapshot(client, now, principal)
            finally:
                CALL_HEADERS.reset(token)
        except (MCPError, ClientError) as exc:
            log.warning("server %r could not list its tools for a caller: %s", link.name, exc)
            return []
        if store is not None:
            store.save(link.config, made)
        return link.offer(made.tools)

    def lister(self) -> Handler:
        """`tools/list` answered for its caller: the shared tools and the caller's own, never
        from the front's list cache."""

        async def tools_list(server: Server, request: ServerRequest) -> Any:
            await self.load()
            _, access = _caller()
            everything = server.tools.values()
            granted = None
            if any(tool.scopes for tool in everything):
                granted = access.scopes if access is not None else frozenset()
            cursor = request.params.get("cursor")
            return answer_page(server, "tools/list", cursor, granted, private=True)

        return tools_list

    def caller(self, inner: Handler) -> Handler:
        """`tools/call` that finds the caller's own tools too (`inner`: the front's own)."""

        async def tools_call(server: Server, request: ServerRequest) -> Any:
            name = request.params.get("name")
            if not isinstance(name, str) or not dict.__contains__(server.tools, name):
                await self.load()
            return await inner(server, request)

        return tools_call
