"""The web UI's HTTP surface on its own origin: the page (for the access token or the session
cookie), its static files, and the JSON API the page calls, every request checked by the
`Guard` (Host header, session cookie, CSRF token, Origin) before it is routed."""

from __future__ import annotations

import asyncio
import html
import logging
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ...client import ClientError
from ...protocol.errors import MCPError
from ...protocol.jsonschema import SchemaError, compile_schema, first_errors
from ..supervision import describe
from .asgi import (
    HTTPError,
    Receive,
    Request,
    Scope,
    Send,
    respond,
    respond_json,
    respond_text,
    static_file,
    stream_events,
)
from .bridge import AppRefused
from .inspector import InspectError
from .security import CSRF_HEADER, page_headers

if TYPE_CHECKING:
    from .webhost import WebHost

log = logging.getLogger("mcpkit.host")
T = TypeVar("T")
Handler = Callable[[Request, dict[str, str]], Awaitable[Any]]
_NO_TOKEN = (
    "This page needs its access token: open the address that `mcpkit ui` printed "
    "(it ends with ?token=...)."
)
_STOPPING = "mcpkit is shutting down: the request was not finished"


class UIApp:
    """The ASGI app on the UI's origin."""

    def __init__(self, web: WebHost) -> None:
        self.web = web
        self.guard = web.guard
        self.headers = page_headers([web.sandbox_origin])
        #: API requests being answered (an app's long poll, a tool that takes its time):
        #: `stop_requests` ends them with a 503 when the host stops.
        self.inflight: set[asyncio.Task[Any]] = set()
        self.stopping = False
        n = r"(?P<name>[^/]+)"
        self.routes: list[tuple[str, re.Pattern[str], Handler]] = [
            ("GET", re.compile(r"/api/state"), self.state),
            ("POST", re.compile(r"/api/chat"), self.chat),
            ("POST", re.compile(r"/api/answer"), self.answer),
            ("POST", re.compile(r"/api/pins/approve"), self.approve),
            ("POST", re.compile(rf"/api/servers/{n}/reconnect"), self.reconnect),
            ("POST", re.compile(r"/api/tasks/cancel"), self.cancel_task),
            ("GET", re.compile(rf"/api/inspect/{n}"), self.catalogue),
            ("POST", re.compile(rf"/api/inspect/{n}/request"), self.inspect),
            ("POST", re.compile(rf"/api/inspect/{n}/listen"), self.listen),
            ("POST", re.compile(rf"/api/listen/{n}/stop"), self.unlisten),
            ("GET", re.compile(rf"/api/inspect/{n}/wire"), self.wire),
            ("POST", re.compile(rf"/api/apps/{n}/rpc"), self.app_rpc),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        guard = self.guard
        if not guard.host_ok(request.header("host")):
            await respond_text(
                send, 403, "unknown Host header (this UI answers on its own address)"
            )
            return
        path = request.path
        if path == "/" and request.method == "GET":
            await self.page(request, send)
            return
        if not guard.session_ok(request.header("cookie")):
            await respond_text(send, 401, _NO_TOKEN, self.headers)
            return
        if path.startswith("/static/") and request.method == "GET":
            found = static_file(path.removeprefix("/static/"))
            if found is None:
                await respond_text(send, 404, "not found", self.headers)
            else:
                await respond(send, 200, found[0], found[1], self.headers)
            return
        # The API: CSRF token and Origin on every request, reads included.
        token = request.header(CSRF_HEADER) or request.query("csrf")
        if not guard.origin_ok(request.header("origin")) or not guard.csrf_ok(token):
            await respond_json(send, {"error": "missing or wrong CSRF token or Origin"}, 403)
            return
        if path == "/api/events" and request.method == "GET":
            after = request.header("last-event-id") or request.query("after") or "0"
            events = (e.encode() async for e in self.web.hub.follow(_int(after)))
            await stream_events(receive, send, events, [(b"cache-control", b"no-store")])
            return
        for method, pattern, handler in self.routes:
            match = pattern.fullmatch(path)
            if match and method == request.method:
                await self._answer(request, send, handler, match.groupdict())
                return
        await respond_json(send, {"error": "not found"}, 404)

    async def _answer(
        self, request: Request, send: Send, handler: Handler, args: dict[str, str]
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.inflight.add(task)
        try:
            value = await handler(request, args)
        except HTTPError as exc:
            await respond_json(send, {"error": exc.message}, exc.status)
            return
        except asyncio.CancelledError:
            if not self.stopping:
                raise
            # Cancelled by `stop_requests`: answered here, so the server (uvicorn) neither
            # waits its graceful-shutdown time for it nor prints a traceback.
            task.uncancel()
            await respond_json(send, {"error": _STOPPING}, 503)
            return
        except Exception as exc:  # one line for the page; the details to the log
            log.exception("web UI: %s %s failed", request.method, request.path)
            await respond_json(send, {"error": f"the host failed: {describe(exc)}"}, 500)
            return
        finally:
            self.inflight.discard(task)
        await respond_json(send, value)

    def stop_requests(self) -> None:
        """The host stops (Ctrl-C, or its context exits): every API request still waiting
        ends now with a 503 saying so (the call it waited on is cancelled)."""
        self.stopping = True
        for task in list(self.inflight):
            task.cancel()

    async def page(self, request: Request, send: Send) -> None:
        guard = self.guard
        headers = list(self.headers)
        token = request.query("token")
        if token is not None:
            session = guard.login(token)
            if session is None:
                await respond_text(send, 401, "Wrong access token. " + _NO_TOKEN, self.headers)
                return
            headers.append((b"set-cookie", guard.cookie(session).encode()))
        elif not guard.session_ok(request.header("cookie")):
            await respond_text(send, 401, _NO_TOKEN, self.headers)
            return
        found = static_file("index.html")
        assert found is not None
        text = found[0].decode()
        text = text.replace("{{csrf}}", html.escape(guard.csrf))
        text = text.replace("{{sandbox}}", html.escape(self.web.sandbox_origin))
        await respond(send, 200, text.encode(), found[1], headers)

    # -- chat --------------------------------------------------------------------------
    async def state(self, request: Request, _: dict[str, str]) -> Any:
        return self.web.snapshot()

    async def chat(self, request: Request, _: dict[str, str]) -> Any:
        body = await request.json()
        text = body.get("text") if isinstance(body, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise HTTPError(400, "write a message first")
        if self.web.model_hint is not None:
            raise HTTPError(409, self.web.model_hint)
        if not self.web.start_turn(text.strip()):
            raise HTTPError(409, "the agent is still answering the last message")
        return {"ok": True}

    async def answer(self, request: Request, _: dict[str, str]) -> Any:
        body = await request.json()
        if not isinstance(body, dict):
            raise HTTPError(400, "expected {id, answer}")
        question = self.web.questions.get(str(body.get("id")))
        if question is None:
            raise HTTPError(404, "this question was already answered or withdrawn")
        value = body.get("answer")
        if question.kind == "consent" and value not in ("once", "session", "deny"):
            raise HTTPError(400, "answer once, session or deny")
        if question.kind == "app-consent" and value not in ("allow", "deny"):
            raise HTTPError(400, "answer allow or deny")
        if question.kind == "elicit":
            value = elicit_answer(question.detail, value)
        self.web.questions.answer(question.id, value)
        return {"ok": True}

    async def approve(self, request: Request, _: dict[str, str]) -> Any:
        """One change `{server, tool, digest}`, or a new server's catalogue `{server, tools:
        [{tool, digest}]}`: what the page showed, approved only if it is still what waits."""
        body = await request.json()
        if not isinstance(body, dict):
            raise HTTPError(400, "expected {server, tool, digest} or {server, tools}")
        tools = body.get("tools")
        shown: list[Any] = tools if isinstance(tools, list) else [body]
        wanted = {
            (body.get("server"), t.get("tool"), t.get("digest"))
            for t in shown
            if isinstance(t, dict)
        }
        fleet = self.web.host.fleet
        changes = [c for c in fleet.pending_changes() if (c.server, c.tool, c.digest) in wanted]
        if not changes or len(changes) < len(wanted):
            raise HTTPError(404, "no such pending change (already approved, or changed again)")
        approved = all([fleet.approve(change) for change in changes])
        self.web.status()
        return {"approved": approved}

    async def reconnect(self, request: Request, args: dict[str, str]) -> Any:
        if args["name"] not in self.web.host.fleet.links:
            raise HTTPError(404, f"no server named {args['name']!r}")
        self.web.host.fleet.links[args["name"]].reconnect_now()
        return {"ok": True}

    async def cancel_task(self, request: Request, _: dict[str, str]) -> Any:
        body = await request.json()
        task = body.get("task") if isinstance(body, dict) else None
        if not isinstance(task, str) or self.web.agent is None:
            raise HTTPError(400, "expected {task}: the id of a background task")
        try:
            text = await self.web.agent.background.cancel(task)
        except LookupError as exc:
            raise HTTPError(404, str(exc.args[0])) from None
        except (MCPError, ClientError) as exc:
            raise HTTPError(409, f"the server did not cancel task {task}: {exc}") from None
        self.web.tasks_changed()
        return {"ok": True, "text": text}

    # -- inspector ---------------------------------------------------------------------
    async def catalogue(self, request: Request, args: dict[str, str]) -> Any:
        try:
            return await self.web.inspector.catalogue(args["name"])
        except InspectError as exc:
            raise HTTPError(409, str(exc)) from None

    async def inspect(self, request: Request, args: dict[str, str]) -> Any:
        body = await request.json()
        if not isinstance(body, dict) or not isinstance(body.get("params"), dict):
            raise HTTPError(400, "expected {method, params}")
        method, inspector = str(body.get("method")), self.web.inspector
        try:
            if method == "tools/call":  # with the app, when the tool has a UI
                return await inspector.call(args["name"], body["params"])
            return {"result": await inspector.request(args["name"], method, body["params"])}
        except InspectError as exc:
            return {"error": str(exc)}

    async def listen(self, request: Request, args: dict[str, str]) -> Any:
        body = await request.json()
        try:
            return {
                "id": self.web.inspector.listen(
                    args["name"], body if isinstance(body, dict) else {}
                )
            }
        except InspectError as exc:
            raise HTTPError(409, str(exc)) from None

    async def unlisten(self, request: Request, args: dict[str, str]) -> Any:
        return {"stopped": await self.web.inspector.unlisten(args["name"])}

    async def wire(self, request: Request, args: dict[str, str]) -> Any:
        return {"messages": list(self.web.inspector.wire.get(args["name"], []))}

    # -- MCP Apps ----------------------------------------------------------------------
    async def app_rpc(self, request: Request, args: dict[str, str]) -> Any:
        """A request an app sent through the page's bridge: tools/call, resources/read or
        ui/update-model-context (kept here for the model's next turn)."""
        body = await request.json()
        if not isinstance(body, dict):
            raise HTTPError(400, "expected {method, params}")
        params = body.get("params")
        params = params if isinstance(params, dict) else {}
        apps = self.web.apps
        try:
            if body.get("method") == "tools/call":
                call = apps.call_tool(
                    args["name"],
                    params.get("name"),
                    params.get("arguments"),
                    view=body.get("view"),
                    auto=body.get("auto") is True,
                )
                result = await while_connected(request, call)
            elif body.get("method") == "resources/read":
                result = await apps.read_resource(args["name"], params.get("uri"))
            elif body.get("method") == "ui/update-model-context":
                result = {"shown": apps.update_context(args["name"], params)}
            else:
                return {
                    "error": {
                        "code": -32601,
                        "message": f"method {body.get('method')!r} is not available to apps",
                    }
                }
        except AppRefused as exc:
            return {"error": {"code": -32000, "message": str(exc)}}
        return {"result": result}


async def while_connected(request: Request, work: Awaitable[T]) -> T:
    """`work`, cancelled if the page that asked goes away first (closed or reloaded): what it
    was waiting for, a server's question included, belongs to the live page only, and is
    withdrawn with the call (the reloaded page renders the app again, which asks anew)."""
    task = asyncio.ensure_future(work)

    async def gone() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    watcher = asyncio.ensure_future(gone())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    if task.cancelled():
        raise HTTPError(499, "the page that asked went away")
    return task.result()


def elicit_answer(detail: dict[str, Any], value: Any) -> Any:
    """ELIC-31: the page validated the form; the host checks again before answering."""
    if detail.get("mode") == "url":
        if value not in ("accept", "decline", "cancel"):
            raise HTTPError(400, "answer accept, decline or cancel")
        return value
    if not isinstance(value, dict) or value.get("action") not in ("accept", "decline", "cancel"):
        raise HTTPError(400, "expected {action, content}")
    if value["action"] != "accept":
        return {"action": value["action"]}
    content = value.get("content")
    if not isinstance(content, dict):
        raise HTTPError(400, "an accepted form needs its content")
    try:
        errors = first_errors(compile_schema(detail.get("schema") or {}), content)
    except SchemaError as exc:
        raise HTTPError(422, f"the server's form schema is unusable: {describe(exc)}") from None
    if errors:
        raise HTTPError(422, "the answer does not fit the form: " + "; ".join(errors))
    return {"action": "accept", "content": content}


def _int(value: str) -> int:
    try:
        return max(0, int(value))
    except ValueError:
        return 0
