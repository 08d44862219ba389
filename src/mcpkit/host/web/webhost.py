"""`WebHost`: the host with a web UI in front of it, served by uvicorn on two loopback ports
(the UI's origin and the app sandbox's origin, one server, one ASGI app dispatching on the
port a connection arrived on).

    async with WebHost(load_config("mcp.json"), model=make_model(None)) as web:
        print(web.url)          # http://127.0.0.1:PORT/?token=...
        await web.wait_closed()
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from dataclasses import asdict
from typing import Any

from ..agent import Agent
from ..apps import APPS_CAPABILITY, APPS_EXTENSION, for_model
from ..config import HostConfig
from ..conversation import UserMessage
from ..link import ClientFeatures
from ..models.base import ModelAdapter
from ..pipeline import (
    AuditRecorded,
    BackgroundEnded,
    CallBackgrounded,
    ConsentPolicy,
    Event,
    for_inspector,
    read_audit,
)
from ..quarantine import summary
from ..settings import HostSettings
from ..supervision import describe
from .asgi import Receive, Request, Scope, Send
from .bridge import AppHost
from .events import EventHub, Questions
from .inspector import Inspector
from .routes import UIApp
from .sandbox import serve_sandbox
from .security import Guard
from .webui import WebUI


def _listen(bind: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((bind, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


class WebHost:
    def __init__(
        self,
        config: HostConfig,
        *,
        model: ModelAdapter,
        agent: str | None = None,
        system: str | None = None,
        servers: list[str] | None = None,
        settings: HostSettings | None = None,
        policy: ConsentPolicy | None = None,
        bind: str = "127.0.0.1",
        port: int = 0,
        view: str = "chat",
    ) -> None:
        from .. import Host
        from ..models.none import NoModel

        self.hub = EventHub()
        self.questions = Questions(self.hub)
        self.ui = WebUI(self.hub, self.questions)
        self.inspector = Inspector(self.hub)
        self._sockets = [_listen(bind, port), _listen(bind, 0)]
        self.port = self._sockets[0].getsockname()[1]
        self.sandbox_port = self._sockets[1].getsockname()[1]
        self.guard = Guard(self.port, bind)
        shown = "127.0.0.1" if bind in ("0.0.0.0", "::") else bind
        self.sandbox_origin = (
            f"http://{shown if ':' not in shown else f'[{shown}]'}:{self.sandbox_port}"
        )
        self.apps = AppHost(self.hub, self.ui, self.sandbox_origin)
        self.apps.by_hand = self.inspector.app_call
        self.inspector.apps = self.apps
        settings = settings or HostSettings.from_config(config)
        self.audit_file = settings.audit
        #: The audit file's last records from before this session (this session's are events).
        self.earlier_audit: list[dict[str, Any]] = []
        self.host = Host(
            config,
            model=model,
            ui=self.ui,
            policy=policy,
            servers=servers,
            settings=settings,
            features=ClientFeatures(
                extensions={APPS_EXTENSION: APPS_CAPABILITY},
                url_elicitation=True,
                trace=self.inspector.trace,
            ),
        )
        #: The tab the page opens on (`mcpkit dev`: the inspector).
        self.view = view
        #: Without a model the chat says how to set one (the inspector and apps work).
        self.model_hint = model.hint if isinstance(model, NoModel) else None
        self.agent_name = agent
        self.system = system
        self.agent: Agent | None = None
        self.turn: asyncio.Task[None] | None = None
        self._app = UIApp(self)
        self._server: Any = None
        self._serving: asyncio.Task[None] | None = None

    def _heard(self, event: Event) -> None:
        """The audit trail, shown in the page as it is recorded (and written to the
        configured file, if any, by the pipeline's audit policy)."""
        if isinstance(event, AuditRecorded):
            self.hub.publish("audit", record=asdict(event.record))
        elif isinstance(event, CallBackgrounded | BackgroundEnded):
            self.tasks_changed()

    @property
    def url(self) -> str:
        """The address to open, with the access token."""
        return self.guard.url()

    async def __aenter__(self) -> WebHost:
        import uvicorn

        from ...server.transports.uvicorn_adapter import NotifyingServer

        if self.audit_file is not None:
            with contextlib.suppress(OSError):
                self.earlier_audit = list(read_audit(self.audit_file))[-200:]
        await self.host.__aenter__()
        self.agent = self.host.agent(system=self.system, name=self.agent_name)
        self.apps.bind(self.host.fleet, self.agent)
        self.inspector.fleet = self.host.fleet
        # The inspector's calls share the agent's bus: the page hears one audit trail.
        self.inspector.pipeline = for_inspector(bus=self.agent.events, audit=self.host.audit)
        self.agent.events.subscribe(self._heard)
        self.ui.on_status = self.status
        self.status()
        config = uvicorn.Config(
            self, lifespan="off", log_level="warning", access_log=False, timeout_graceful_shutdown=2
        )
        self._server = NotifyingServer(config, on_exit=self._app.stop_requests)
        # The sockets already listen: the page can connect before uvicorn's first accept.
        self._serving = asyncio.create_task(self._server.serve(sockets=self._sockets))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.turn is not None:
            self.turn.cancel()
            await asyncio.gather(self.turn, return_exceptions=True)
        self._app.stop_requests()
        await self.inspector.close()
        await self.apps.close()
        self.hub.close()
        if self._server is not None:
            self._server.should_exit = True
        if self._serving is not None:
            await asyncio.gather(self._serving, return_exceptions=True)
        for sock in self._sockets:
            sock.close()
        await self.host.__aexit__(None, None, None)

    async def wait_closed(self) -> None:
        """Until uvicorn stops (Ctrl-C)."""
        if self._serving is not None:
            await asyncio.shield(self._serving)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        server = scope.get("server") or ("", 0)
        if server[1] == self.sandbox_port:
            await serve_sandbox(
                Request(scope, receive),
                send,
                self._app_resource,
                lambda host: self.guard.host_ok(host, self.sandbox_port),
                self.guard.origins(),
            )
            return
        await self._app(scope, receive, send)

    def _app_resource(self, app_id: str) -> Any:
        app = self.apps.apps.get(app_id)
        return app.resource if app is not None else None

    # -- the conversation --------------------------------------------------------------
    def start_turn(self, text: str) -> bool:
        """Send the user's message to the agent; False while it is still answering."""
        if self.turn is not None and not self.turn.done():
            return False
        self.turn = asyncio.create_task(self._ask(text))
        return True

    async def _ask(self, text: str) -> None:
        assert self.agent is not None
        self.hub.publish("turn", state="running")
        try:
            # The apps' context updates go with the user's next message (SEP-1865).
            context = self.apps.take_context()
            if context:
                await self.agent.send([UserMessage(f"{context}\n\n{text}")], text)
            else:
                await self.agent.ask(text)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.hub.publish("note", level="error", text=f"the turn failed: {describe(exc)}")
        finally:
            self.hub.publish("turn", state="idle")
            self.status()
            self.tasks_changed()  # results the model now has leave the panel

    # -- panels ------------------------------------------------------------------------
    def status(self) -> None:
        self.hub.publish(
            "status", servers=self.servers(), pins=self.pins(), tools=self.example_tools()
        )

    def tasks(self) -> list[dict[str, Any]]:
        """The background calls not yet delivered to the model (running, or ended)."""
        if self.agent is None:
            return []
        return [running.describe() for running in self.agent.background.listed()]

    def tasks_changed(self) -> None:
        self.hub.publish("tasks", tasks=self.tasks())

    def servers(self) -> list[dict[str, Any]]:
        return [
            {
                "name": link.name,
                "transport": link.config.transport,
                "trusted": link.config.trusted,
                "state": link.state.value,
                "detail": link.detail,
                "retry_in": link.retry_in,
                "tools": len(link.tools),
                "withheld": len(link.withheld),
            }
            for link in self.host.fleet.links.values()
        ]

    def pins(self) -> list[dict[str, Any]]:
        """Tools withheld now and not approved since (the links re-check their pins at the
        next model round): a new server's catalogue as one item (`tools`), else one a tool."""
        fleet = self.host.fleet
        waiting = (
            {(c.server, c.tool, c.digest) for c in fleet.pins.pending()} if fleet.pins else set()
        )
        out: list[dict[str, Any]] = []
        for batch in fleet.questions():
            batch = [c for c in batch if (c.server, c.tool, c.digest) in waiting]
            if not batch:
                continue
            c = batch[0]
            item: dict[str, Any] = {
                "server": c.server,
                "tool": c.tool,
                "digest": c.digest,
                "diff": c.diff(),
            }
            if len(batch) > 1 or not fleet.pins_approved(c.server):
                item = {"server": c.server, "diff": "\n".join(summary(batch))}
                item["tools"] = [{"tool": c.tool, "digest": c.digest} for c in batch]
            out.append({**item, "new": c.new, "reason": c.reason})
        return out

    def example_tools(self, most: int = 6) -> list[dict[str, Any]]:
        """A few tools the model would see, one server after another (the empty chat makes
        example prompts of them)."""
        out: list[dict[str, Any]] = []
        for link in self.host.fleet.links.values():
            for tool in link.tools[:2]:
                if for_model(tool.raw):
                    line = (tool.description or "").strip().split("\n")[0][:120]
                    out.append({"server": link.name, "tool": tool.name, "description": line})
        return out[:most]

    def snapshot(self) -> dict[str, Any]:
        return {
            "model": self.host.model.name,
            "modelHint": self.model_hint,
            "view": self.view,
            "tools": self.example_tools(),
            "agent": self.agent_name,
            "servers": self.servers(),
            "pins": self.pins(),
            "tasks": self.tasks(),
            "audit": self.earlier_audit,
            "auditFile": str(self.audit_file) if self.audit_file is not None else None,
            "sandbox": self.sandbox_origin,
        }
