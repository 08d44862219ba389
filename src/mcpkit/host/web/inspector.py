"""The inspector: each configured server as its connection sees it — tools (with what the
model and apps may use), resources, templates and prompts; calls, reads and prompts run by
hand; `subscriptions/listen` streams followed live; and the raw JSON-RPC of every exchange,
recorded from the link's client trace.

It uses the host's own connections (the same process, session and supervision the agent
uses), so what it shows is what the agent gets.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from ...client import ClientError, Tool
from ...protocol.errors import MCPError
from ..apps import AppResourceError, for_apps, for_model, resource_uri
from ..connections import Fleet, Target
from ..link import ServerLink
from ..pipeline import Call, Decision, Pipeline, Ruling
from ..schemas import adapt
from ..supervision import describe
from .events import EventHub

if TYPE_CHECKING:
    from .bridge import AppHost

#: Strings longer than this are cut in the trace the page sees (a resource may be megabytes).
CLIP = 4000


class InspectError(Exception):
    """One line for the page."""


class Inspector:
    def __init__(self, hub: EventHub, keep: int = 400) -> None:
        self.hub = hub
        self.fleet: Fleet | None = None
        #: Tool calls typed here run through it (`for_inspector`: audited as the user's own).
        self.pipeline: Pipeline | None = None
        self._calls = itertools.count(1)
        self.wire: dict[str, deque[dict[str, Any]]] = {}
        self._keep = keep
        self._listens: dict[str, asyncio.Task[None]] = {}
        #: Renders the app of a tool with a UI called here (as the chat's cards do).
        self.apps: AppHost | None = None

    # -- the raw exchange log (a `ClientFeatures.trace`) --------------------------------
    def trace(self, server: str, direction: str, message: dict[str, Any]) -> None:
        # `time`: epoch milliseconds, for the page's log (its clock, its time zone).
        entry = {
            "server": server,
            "dir": direction,
            "time": round(time.time() * 1000, 1),
            "message": clip(message),
        }
        self.wire.setdefault(server, deque(maxlen=self._keep)).append(entry)
        self.hub.publish("rpc", entry, replay=False)

    # -- browsing ----------------------------------------------------------------------
    def link(self, server: str) -> ServerLink:
        link = self.fleet.links.get(server) if self.fleet is not None else None
        if link is None:
            raise InspectError(f"no server named {server!r}")
        if link.client is None or not link.up:
            raise InspectError(f"the {server!r} server is {link.state.value} ({link.detail})")
        return link

    async def catalogue(self, server: str) -> dict[str, Any]:
        link = self.link(server)
        assert link.client is not None
        info = link.client.info
        caps = info.capabilities if info is not None else {}
        out: dict[str, Any] = {
            "server": server,
            "info": info.raw if info is not None else {},
            "era": info.era if info is not None else None,
            "errors": {},
        }
        offered = {t.name for t in link.tools}
        withheld = {c.tool for c in link.withheld}
        lists = [
            ("tools", "tools/list", "tools", "tools"),
            ("resources", "resources/list", "resources", "resources"),
            ("templates", "resources/templates/list", "resourceTemplates", "resources"),
            ("prompts", "prompts/list", "prompts", "prompts"),
        ]
        for key, method, field, capability in lists:
            if capability not in caps:
                out[key] = []
                continue
            try:
                out[key] = await _list_all(link, method, field)
            except (MCPError, ClientError) as exc:
                out[key] = []
                out["errors"][key] = describe(exc)
        out["tools"] = [
            {
                **tool,
                "x-host": {
                    "model": for_model(tool) and tool.get("name") in offered,
                    "app": for_apps(tool),
                    "withheld": tool.get("name") in withheld,
                    "ui": resource_uri(tool),
                },
            }
            for tool in out["tools"]
        ]
        return out

    async def request(self, server: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """tools/call, resources/read or prompts/get, as the user typed it."""
        if method not in ("tools/call", "resources/read", "prompts/get"):
            raise InspectError(f"the inspector does not send {method}")
        link = self.link(server)
        assert link.client is not None
        if method == "tools/call":
            arguments = params.get("arguments")
            if arguments is not None and not isinstance(arguments, dict):
                raise InspectError("tools/call arguments must be an object")
            tool, call_id = _tool(link, str(params.get("name"))), f"inspector-{next(self._calls)}"
            return await self._call(link, tool, arguments, "inspector", call_id)
        try:
            return await link.client.request(method, params, use_cache=False)
        except MCPError as exc:
            raise InspectError(describe(exc)) from None
        except ClientError as exc:
            link.report(exc)
            raise InspectError(describe(exc)) from None

    async def call(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        """`tools/call` typed by hand: `{result}`, with `app` (what the page renders) when the
        tool has a UI, or `appError` (one line) when its UI cannot be shown."""
        link = self.link(server)
        name, arguments = str(params.get("name")), params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise InspectError("tools/call arguments must be an object")
        tool = _tool(link, name)
        call_id = f"inspector-{next(self._calls)}"
        uri = resource_uri(tool.raw)
        opening = (  # the UI is fetched while the call runs, as for the chat's calls
            asyncio.create_task(
                self.apps.open(link, tool, uri, call_id, arguments or {}, "inspector")
            )
            if uri is not None and self.apps is not None
            else None
        )
        try:
            out: dict[str, Any] = {
                "result": await self._call(link, tool, arguments, "inspector", call_id)
            }
        except BaseException:
            if opening is not None:
                opening.cancel()
            raise
        if opening is not None:
            try:
                out["app"] = await opening
            except (AppResourceError, MCPError, ClientError) as exc:
                out["appError"] = f"cannot show the app of {server} > {name}: {describe(exc)}"
        return out

    async def app_call(
        self, link: ServerLink, tool: Tool, arguments: dict[str, Any], caller: str
    ) -> dict[str, Any]:
        """A call from an app rendered here (`AppHost.by_hand`): the user's own, like the
        inspector's, audited with the app as its caller."""
        from .bridge import AppRefused

        try:
            return await self._call(link, tool, arguments, caller, f"{caller}-{next(self._calls)}")
        except InspectError as exc:
            raise AppRefused(str(exc)) from None

    async def _call(
        self, link: ServerLink, tool: Tool, arguments: Any, caller: str, call_id: str
    ) -> dict[str, Any]:
        """A call typed by hand: through the inspector's pipeline (`for_inspector`), recorded
        as the user's own; a tool withheld since its definition changed is refused."""
        if self.pipeline is None:
            raise InspectError("the host is not connected yet")
        call = Call(
            tool.name,
            call_id,
            dict(arguments or {}),
            caller=caller,
            target=Target(link, tool, adapt(tool.input_schema)),
            ruling=Ruling(Decision.ALLOW, "user"),
        )
        outcome = await self.pipeline(call)
        if outcome.raw is None:
            raise InspectError(outcome.error or "the call failed")
        return outcome.raw.raw

    # -- subscriptions/listen ------------------------------------------------------------
    def listen(self, server: str, wanted: dict[str, Any]) -> str:
        link = self.link(server)
        listen_id = secrets.token_hex(6)
        task = asyncio.create_task(self._follow(link, listen_id, wanted))
        self._listens[listen_id] = task
        task.add_done_callback(lambda _: self._listens.pop(listen_id, None))
        return listen_id

    async def _follow(self, link: ServerLink, listen_id: str, wanted: dict[str, Any]) -> None:
        assert link.client is not None
        where = {"server": link.name, "listen": listen_id}
        uris = [u for u in wanted.get("uris") or [] if isinstance(u, str)]
        try:
            async with link.client.subscribe(
                tools=bool(wanted.get("tools")),
                prompts=bool(wanted.get("prompts")),
                resources=bool(wanted.get("resources")),
                resource_uris=uris,
            ) as sub:
                self.hub.publish("listen", where, state="open", acknowledged=sub.acknowledged)
                async for note in sub:
                    self.hub.publish(
                        "listen", where, state="note", method=note.method, params=note.params
                    )
            self.hub.publish("listen", where, state="closed", detail="the server ended it")
        except asyncio.CancelledError:
            self.hub.publish("listen", where, state="closed", detail="stopped")
            raise
        except (MCPError, ClientError) as exc:
            self.hub.publish("listen", where, state="closed", detail=describe(exc))

    async def unlisten(self, listen_id: str) -> bool:
        task = self._listens.get(listen_id)
        if task is None:
            return False
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return True

    async def close(self) -> None:
        for listen_id in list(self._listens):
            await self.unlisten(listen_id)


async def _list_all(link: ServerLink, method: str, field: str) -> list[dict[str, Any]]:
    assert link.client is not None
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(100):
        page, cursor = await link.client.list_page(method, field, cursor)
        items += page
        if cursor is None:
            break
    return items


def _tool(link: ServerLink, name: str) -> Tool:
    """The tool by its server's name: offered, withheld (the pins policy refuses it), or
    unknown to the host (the server answers)."""
    for tool in link.tools:
        if tool.name == name:
            return tool
    for change in link.withheld:
        if change.tool == name:
            return Tool.from_wire(change.current)
    return Tool.from_wire({"name": name})


def clip(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= CLIP else value[:CLIP] + f"… ({len(value):,} characters)"
    if isinstance(value, dict):
        return {k: clip(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clip(v) for v in value]
    return value
