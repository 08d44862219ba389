"""The host side of MCP Apps that needs the servers: fetch a tool's `ui://` resource when a
call to it goes ahead, keep each rendered app's identity (its server and tool), and carry out
what an app asks through the page's postMessage bridge — `tools/call` only on its own server,
only tools visible to apps, under the same consent policy and audit trail as the model's calls;
`resources/read` only from its own server.

Consent is asked once per app instance, in its card, before its frame loads (the pipeline's
`Consent.admit_app` decides whether to ask and keeps the answer for the app's calls). A page
reloaded renders each app again from its stored input and result; the calls the app then makes
by itself are answered from what they returned the first time (`replay.CallRecord`).
`ui/update-model-context` is kept (each app's latest only) for the model's next turn.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ...client import ClientError, Tool
from ...protocol.errors import MCPError
from ..agent import Agent
from ..apps import AppResource, AppResourceError, app_resource, for_apps, resource_uri
from ..connections import Fleet, Target
from ..conversation import ToolResult
from ..link import ServerLink
from ..pipeline import Call, CallAllowed, CallFinished, CallSent, Event, PendingCall, Ruling
from ..schemas import adapt
from ..supervision import describe
from .events import EventHub
from .replay import CallRecord
from .webui import WebUI

log = logging.getLogger("mcpkit.host")


class AppRefused(Exception):
    """An app asked for something it may not have (one line, returned to the app)."""


@dataclass(frozen=True, slots=True)
class AppSession:
    id: str
    server: str
    tool: dict[str, Any]
    call_id: str
    resource: AppResource
    #: Where it was rendered: `chat` (a call's card) or `inspector` (a call typed by hand).
    origin: str = "chat"
    #: What the app's own calls returned, for its renderings after a page reload.
    calls: CallRecord = field(default_factory=CallRecord)


class AppHost:
    def __init__(
        self, hub: EventHub, ui: WebUI, sandbox_origin: str, teardown_wait: float = 3.0
    ) -> None:
        self.hub = hub
        self.ui = ui
        self.sandbox_origin = sandbox_origin
        #: How long a closing card waits for its app's answer to `ui/resource-teardown` (s).
        self.teardown_wait = teardown_wait
        self.apps: dict[str, AppSession] = {}
        self.fleet: Fleet | None = None
        self.agent: Agent | None = None
        #: (server, uri) → its read, shared while on the wire: calls of tools with one app
        #: wait for one read, so a server that dies after it still shows them all.
        self._cache: dict[tuple[str, str], asyncio.Future[AppResource]] = {}
        self._calls = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()
        #: How an app rendered in the inspector calls its tools: as the inspector's own calls
        #: (the user opened it by hand there), with the same visibility checks.
        self.by_hand: Callable[[ServerLink, Tool, dict[str, Any], str], Awaitable[Any]] | None = (
            None
        )
        #: call id → the JSON-RPC id of its tools/call request (`toolInfo.id`), for calls
        #: whose app is being fetched; `_shown`: call id → its app, once published.
        self._request_ids: dict[str, int] = {}
        self._shown: dict[str, str] = {}
        #: app id → the context it last gave for the model (`ui/update-model-context`).
        self.contexts: dict[str, str] = {}

    def bind(self, fleet: Fleet, agent: Agent) -> None:
        self.fleet, self.agent = fleet, agent
        agent.events.subscribe(self._heard)

    def _heard(self, event: Event) -> None:
        if isinstance(event, CallAllowed):
            self.allowed(event.call)
        elif isinstance(event, CallSent) and event.call.call_id in self.ui.app_calls:
            call_id = event.call.call_id
            shown = self._shown.get(call_id)
            if shown is None:  # its app is still being fetched: `open` takes the id
                self._request_ids.setdefault(call_id, event.request_id)
            else:  # the app was shown first: tell the page now (kept nowhere: nothing reads it)
                self.hub.publish("app-request", id=shown, call=call_id, request=event.request_id)
        elif isinstance(event, CallFinished):
            self._shown.pop(event.call.call_id, None)

    # -- rendering ---------------------------------------------------------------------
    def allowed(self, call: PendingCall) -> None:
        """A call goes ahead: if its tool has an interface, fetch it while the call runs."""
        link = self.fleet.links.get(call.server) if self.fleet else None
        tool = _tool(link, call.tool) if link is not None else None
        uri = resource_uri(tool.raw) if tool is not None else None
        if link is None or tool is None or uri is None or call.call_id.startswith("app-"):
            return
        self.ui.app_calls.add(call.call_id)
        task = asyncio.create_task(self._open(link, tool, uri, call))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _open(self, link: ServerLink, tool: Tool, uri: str, call: PendingCall) -> None:
        try:
            shown = await self.open(link, tool, uri, call.call_id, call.arguments)
        except (AppResourceError, MCPError, ClientError) as exc:
            self._request_ids.pop(call.call_id, None)
            self.ui.warn(f"cannot show the app of {link.name} > {tool.name}: {describe(exc)}")
            return
        ruling = await self._admit(self.apps[shown["id"]], link, call)
        self.hub.publish("app", shown, calls=ruling.decision.value, callsBy=ruling.by)

    async def open(
        self,
        link: ServerLink,
        tool: Tool,
        uri: str,
        call_id: str,
        arguments: dict[str, Any],
        origin: str = "chat",
    ) -> dict[str, Any]:
        """A new app session for a call: what the page needs to render it (`AppView`)."""
        resource = await self.resource(link, uri)
        session = AppSession(secrets.token_hex(12), link.name, tool.raw, call_id, resource, origin)
        self.apps[session.id] = session
        request = self._request_ids.pop(call_id, None)
        if request is None and call_id in self.ui.app_calls:  # not sent yet, nor ended
            self._shown[call_id] = session.id
        # For security review (SEP-1865): which app ran under which policy.
        log.info("app %s of %s > %s: CSP %s", uri, link.name, tool.name, resource.policy())
        return {
            "id": session.id,
            "call": call_id,
            "server": link.name,
            "tool": tool.raw,
            "arguments": arguments,
            "html": resource.html,
            "csp": resource.csp,
            "permissions": resource.permissions,
            "prefersBorder": resource.prefers_border,
            "sandbox": f"{self.sandbox_origin}/sandbox/{session.id}",
            "request": request,
            "teardownWait": round(self.teardown_wait * 1000),
        }

    async def _admit(self, session: AppSession, link: ServerLink, call: PendingCall) -> Ruling:
        """May this app instance call its server's tools? Asked in its card, once, before its
        frame loads, where the consent rules would ask about any of the tools it may call."""
        assert self.agent is not None
        tools = [t for t in link.tools if for_apps(t.raw)]
        pending = [
            Call(
                f"{link.name}__{t.name}", "", {}, target=Target(link, t, adapt(t.input_schema))
            ).pending()
            for t in tools
        ]

        async def ask() -> bool:
            answer = await self.ui.questions.ask(
                "app-consent",
                call=call.call_id,
                app=session.id,
                server=link.name,
                tools=[t.name for t in tools],
            )
            return bool(answer == "allow")

        return await self.agent.consent.admit_app(session.id, pending, ask)

    async def resource(self, link: ServerLink, uri: str) -> AppResource:
        """The `ui://` resource, read once per server (templates are static: SEP-1865)."""
        key = (link.name, uri)
        read = self._cache.get(key)
        if read is None:
            if link.client is None or not link.up:
                raise AppResourceError(f"the {link.name!r} server is not connected")
            read = self._cache[key] = asyncio.ensure_future(self._read(link, uri))
            read.add_done_callback(_retrieved)  # its callers may all have gone
        try:
            return await asyncio.shield(read)  # one caller cancelled leaves the read to others
        except (AppResourceError, MCPError, ClientError):
            if self._cache.get(key) is read:
                del self._cache[key]  # a failed read is tried again by the next call
            raise

    @staticmethod
    async def _read(link: ServerLink, uri: str) -> AppResource:
        assert link.client is not None
        result = await link.client.request("resources/read", {"uri": uri}, use_cache=False)
        return app_resource(uri, result)

    # -- what apps ask -----------------------------------------------------------------
    async def call_tool(
        self, app_id: str, name: Any, arguments: Any, *, view: Any = None, auto: bool = False
    ) -> dict[str, Any]:
        """`tools/call` from an app: the result object, or AppRefused. `view` names the
        rendering (one per page load) and `auto` says the app made the call by itself (the
        user was not using it): such calls of a restored app are answered from the record."""
        app, link = self._app(app_id)
        if not isinstance(name, str):
            raise AppRefused("tools/call needs a tool name")
        if arguments is not None and not isinstance(arguments, dict):
            raise AppRefused("tools/call arguments must be an object")
        tool = _tool(link, name)
        if tool is None:
            raise AppRefused(
                f"this app may call only tools of the {link.name!r} server, which has no "
                f"tool {name!r}"
            )
        if not for_apps(tool.raw):
            raise AppRefused(f"the tool {name!r} is not available to apps (its visibility)")
        if app.origin == "inspector" and self.by_hand is not None:
            raw: dict[str, Any] = await self.by_hand(
                link, tool, dict(arguments or {}), f"app:{link.name}"
            )
            return raw
        assert self.agent is not None
        slot = None
        if auto and isinstance(view, str) and view:
            found = app.calls.lookup(view, name, dict(arguments or {}))
            if isinstance(found, dict):
                return found  # a restored app: answered as the first time, nothing runs
            slot = found
        # The agent's pipeline, as for the model's calls: host-owned fields, consent (the
        # answer given for this app instance), on_call, pins, deadline, retry, audit, budget.
        call_id = f"app-{next(self._calls)}"
        try:
            result = await self.agent.perform(
                Target(link, tool, adapt(tool.input_schema)),
                f"{link.name}__{name}",
                call_id,
                dict(arguments or {}),
                caller=f"app:{link.name}",
                app=app.id,
            )
        except asyncio.CancelledError:  # the page that asked went away: its card says so
            text = "cancelled: the page that asked for it was closed or reloaded"
            content = [{"type": "text", "text": text}]
            self.hub.publish("result", id=call_id, content=content, is_error=True)
            raise
        if result.raw is None:
            raise AppRefused(_text(result) or "the call failed")
        if slot is not None:
            app.calls.fill(slot, result.raw)
        return result.raw

    async def read_resource(self, app_id: str, uri: Any) -> dict[str, Any]:
        """`resources/read` from an app: its own server only."""
        _, link = self._app(app_id)
        if not isinstance(uri, str) or link.client is None:
            raise AppRefused("resources/read needs a uri")
        try:
            return await link.client.request("resources/read", {"uri": uri}, use_cache=False)
        except MCPError as exc:
            raise AppRefused(exc.message) from None
        except ClientError as exc:
            raise AppRefused(describe(exc)) from None

    def update_context(self, app_id: str, params: dict[str, Any]) -> str:
        """`ui/update-model-context`: the app's context for the model, replacing what it gave
        before (SEP-1865: only the last update reaches the model, with the next user message).
        Returns the text the model will see ("" when the app cleared it)."""
        app = self.apps.get(app_id)
        if app is None:
            raise AppRefused("unknown app")
        content, structured = params.get("content"), params.get("structuredContent")
        if content is not None and not (
            isinstance(content, list) and all(isinstance(b, dict) for b in content)
        ):
            raise AppRefused("Invalid content format: content is a list of content blocks")
        if structured is not None and not isinstance(structured, dict):
            raise AppRefused("Invalid content format: structuredContent is an object")
        blocks = content or []
        if any(b.get("type") != "text" for b in blocks):
            raise AppRefused("Invalid content format: this host takes text blocks only")
        parts = [str(b.get("text", "")) for b in blocks]
        if structured:
            parts.append(json.dumps(structured, ensure_ascii=False, sort_keys=True))
        text = "\n".join(p for p in parts if p)
        if text:
            self.contexts[app_id] = text
        else:
            self.contexts.pop(app_id, None)
        return text

    def take_context(self) -> str:
        """What the apps gave for the model since its last turn, once (then cleared)."""
        parts = []
        for app_id, text in self.contexts.items():
            app = self.apps.get(app_id)
            if app is not None:
                name = app.tool.get("name", "?")
                parts.append(f"[Context from the {app.server} app ({name}), not the user]\n{text}")
        self.contexts.clear()
        return "\n\n".join(parts)

    def _app(self, app_id: str) -> tuple[AppSession, ServerLink]:
        app = self.apps.get(app_id)
        if app is None or self.fleet is None:
            raise AppRefused("unknown app")
        link = self.fleet.links.get(app.server)
        if link is None or not link.up:
            raise AppRefused(f"the {app.server!r} server is not connected")
        return app, link

    async def opened(self) -> None:
        """Until the interfaces being fetched now are shown (or have failed); an app whose
        consent question is open waits for its answer."""
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def _tool(link: ServerLink, name: str) -> Tool | None:
    """A tool the server offers now (a changed, unapproved definition is withheld)."""
    return next((t for t in link.tools if t.name == name), None)


def _text(result: ToolResult) -> str:
    return " ".join(str(b.get("text", "")) for b in result.content if b.get("type") == "text")


def _retrieved(read: asyncio.Future[AppResource]) -> None:
    if not read.cancelled():
        read.exception()
