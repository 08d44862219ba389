"""The host's MCP servers: one supervised link each, connected in parallel, failures isolated,
tool catalogues refreshed between model rounds (cache per `ttlMs`, invalidated by list_changed).

Each `ServerLink` runs a supervisor task: connect, watch the connection (a stdio process exit,
a broken change stream, a call whose connection failed), and after a loss reconnect with
capped exponential backoff, re-listing the tools and re-checking them against their pins. The
`Fleet` starts all links at once and returns after the start-up deadline with those ready;
late ones join the catalogue at the next model round (see `supervision.py` for the states).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..client import Client, ClientError, Tool
from ..client.inputs import Elicitation
from ..client.stdio import StdioTransport
from ..protocol.errors import MCPError
from .auth_config import oauth_for
from .backoff import Backoff
from .config import HostConfig, ServerConfig
from .consent import ConsentPolicy
from .conversation import AssistantMessage, Message, ToolSpec, UserMessage
from .models.base import ModelAdapter
from .naming import ToolNames
from .pins import PinChange, ToolPins
from .schemas import AdaptedSchema, adapt, without
from .supervision import LinkState, StateChange, connection_lost, describe
from .ui import HostUI

log = logging.getLogger("mcpkit.host")

#: How often a stdio server's process is checked while idle (the client has no exit event).
PROCESS_CHECK_S = 0.25


@dataclass(frozen=True, slots=True)
class Target:
    link: ServerLink
    tool: Tool
    schema: AdaptedSchema


class ServerLink:
    """One configured server, its connection and its supervisor."""

    def __init__(
        self,
        config: ServerConfig,
        ui: HostUI,
        policy: ConsentPolicy,
        model: ModelAdapter | None,
        pins: ToolPins | None,
        *,
        restart: Backoff | None = None,
        on_change: Callable[[ServerLink, StateChange], None] | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.ui = ui
        self.policy = policy
        self.model = model
        self.pins = pins
        self.restart = restart or Backoff()
        self.on_change = on_change
        self.client: Client | None = None
        #: The tools offered to the model (a changed, unapproved definition is withheld).
        self.tools: list[Tool] = []
        self.withheld: list[PinChange] = []
        self.state = LinkState.DISABLED if config.disabled else LinkState.CONNECTING
        #: Why the link is down or degraded (for the user, never the model).
        self.detail: str | None = None
        self.retry_in: float | None = None
        self.stale = False
        self.ever_ready = False
        #: Set whenever the server announces a tool list change (for callers that must see it).
        self.changed = asyncio.Event()
        self._state_changed = asyncio.Event()
        self._settled = asyncio.Event()
        self._wake = asyncio.Event()
        self._lost: asyncio.Future[str] | None = None
        self._watchers: list[asyncio.Task[None]] = []
        self._task: asyncio.Task[None] | None = None

    @property
    def up(self) -> bool:
        return self.state.up

    # -- state ------------------------------------------------------------------------
    def _set(
        self, state: LinkState, detail: str | None = None, retry_in: float | None = None
    ) -> None:
        self.state, self.detail, self.retry_in = state, detail, retry_in
        change = StateChange(self.name, state, detail, retry_in)
        log.info("%s", change.describe())
        if self.on_change is not None:
            self.on_change(self, change)
        event, self._state_changed = self._state_changed, asyncio.Event()
        event.set()

    async def until(self, *states: LinkState) -> None:
        """Wait until the link is in one of `states`."""
        while self.state not in states:
            await self._state_changed.wait()

    async def settled(self) -> None:
        """Wait until the first connection attempt has succeeded or failed."""
        await self._settled.wait()

    def report(self, exc: BaseException) -> None:
        """A request failed: a lost connection takes the link down, anything else degrades it."""
        if not self.up:
            return
        if connection_lost(exc):
            self.lose(describe(exc))
        elif self.state is LinkState.READY:
            self._set(LinkState.DEGRADED, describe(exc))

    def healthy(self) -> None:
        """A request succeeded."""
        if self.state is LinkState.DEGRADED:
            self._set(LinkState.READY, f"{len(self.tools)} tools")

    def lose(self, reason: str) -> None:
        """The connection is gone: withdraw the tools now; the supervisor reconnects."""
        if self._lost is not None and not self._lost.done():
            self._lost.set_result(reason)
            self._set(LinkState.DOWN, reason)

    # -- supervision ------------------------------------------------------------------
    def start(self) -> None:
        if self.state is not LinkState.DISABLED and self._task is None:
            self._task = asyncio.create_task(self._supervise(), name=f"mcpkit-link-{self.name}")
        else:
            self._settled.set()

    def reconnect_now(self) -> None:
        """Skip the rest of the backoff (or drop a live connection and connect again)."""
        if self.up:
            self.lose("reconnect requested")
        self._wake.set()

    async def _supervise(self) -> None:
        loop = asyncio.get_running_loop()
        failures = 0
        while True:
            if self.state is not LinkState.CONNECTING:
                self._set(LinkState.CONNECTING, "reconnecting")
            try:
                async with asyncio.timeout(self.config.timeout):
                    await self._open()
            except Exception as exc:
                reason = describe(exc)
                await self._drop()
            else:
                self.ever_ready = True
                self._set(LinkState.READY, f"{len(self.tools)} tools")
                self._settled.set()
                since = loop.time()
                assert self._lost is not None
                reason = await self._lost
                await self._drop()
                if loop.time() - since > self.restart.cap:
                    failures = 0  # it stayed up a good while: start the backoff afresh
            self._settled.set()
            delay = self.restart.delay(failures)
            failures += 1
            self._set(LinkState.DOWN, reason, delay)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._wake.wait()
            self._wake.clear()

    async def _open(self) -> None:
        sampling = (
            self._sample if self.policy.may_sample(self.name) and self.model is not None else None
        )
        client = Client(
            self.config.client_target(),
            elicitation=self._elicit,
            sampling=sampling,
            timeout=self.config.timeout,
            stderr="capture",
            auth=oauth_for(self.config),
        )
        self.client = client
        await client.__aenter__()
        await self._list()
        self._lost = asyncio.get_running_loop().create_future()
        caps = client.info.capabilities if client.info is not None else {}
        if (caps.get("tools") or {}).get("listChanged"):
            self._watchers.append(asyncio.create_task(self._listen(client)))
        if isinstance(client.transport, StdioTransport):
            self._watchers.append(asyncio.create_task(self._watch_process(client.transport)))

    async def _drop(self) -> None:
        watchers, self._watchers = self._watchers, []
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        client, self.client = self.client, None
        self.tools, self.withheld = [], []
        if client is None:
            return
        with contextlib.suppress(Exception):
            await client.close()
        if isinstance(client.transport, StdioTransport):
            for line in client.transport.stderr_tail:  # the server's noise goes to the log
                log.info("server %r stderr: %s", self.name, line)

    async def _listen(self, client: Client) -> None:
        """The change stream: list_changed marks the catalogue stale; its end is checked."""
        try:
            async with client.subscribe(tools=True) as sub:
                async for _ in sub:
                    self.stale = True  # refreshed before the next model round
                    self.changed.set()
        except asyncio.CancelledError:
            raise
        except (MCPError, ClientError) as exc:
            if connection_lost(exc):
                self.lose(describe(exc))
                return
        # The stream ended (the server closed it, or refused it): is the server still there?
        try:
            await client.request("tools/list", use_cache=False)
        except (MCPError, ClientError) as exc:
            if connection_lost(exc):
                self.lose(describe(exc))

    async def _watch_process(self, transport: StdioTransport) -> None:
        """A stdio server without a change stream (or a legacy one, whose stream outlives the
        process) exits silently: check its return code, which costs no I/O."""
        while transport.returncode is None:  # noqa: ASYNC110 - the client exposes no exit event
            await asyncio.sleep(PROCESS_CHECK_S)
        self.lose(f"the process exited with code {transport.returncode}")

    # -- tools ------------------------------------------------------------------------
    async def refresh(self) -> None:
        """Between rounds: re-list (cached per ttlMs unless list_changed) and re-check pins."""
        if not self.up:
            return
        try:
            await self._list()
        except (MCPError, ClientError) as exc:
            self.report(exc)

    async def _list(self) -> None:
        assert self.client is not None
        tools = await self.client.list_tools()
        self.stale = False
        if self.pins is None:
            self.tools, self.withheld = tools, []
            return
        review = self.pins.review(self.name, [t.raw for t in tools])
        offered = {t["name"] for t in review.offered}
        self.tools = [t for t in tools if t.name in offered]
        self.withheld = review.withheld
        for change in review.fresh:
            self.ui.warn(
                f"server {self.name!r} changed the definition of tool {change.tool!r} since it "
                f"was pinned; it is withheld until you approve it (mcpkit pins diff {self.name})"
            )

    async def _elicit(self, request: Elicitation) -> dict[str, Any]:
        return await self.ui.elicit(self.name, request)

    async def _sample(self, params: dict[str, Any]) -> dict[str, Any]:
        """The host's model answers a server's sampling request (policy allowed it)."""
        assert self.model is not None
        history: list[Message] = []
        for m in params.get("messages") or []:
            content = m.get("content") or {}
            text = content.get("text", "") if isinstance(content, dict) else ""
            history.append(UserMessage(text) if m.get("role") == "user" else AssistantMessage(text))
        reply = await self.model.complete(params.get("systemPrompt"), history, [])
        return {
            "role": "assistant",
            "content": {"type": "text", "text": reply.text},
            "model": self.model.name,
            "stopReason": "endTurn",
        }

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await self._drop()


class Fleet:
    """All the servers one agent uses."""

    def __init__(
        self,
        config: HostConfig,
        ui: HostUI,
        policy: ConsentPolicy,
        *,
        model: ModelAdapter | None = None,
        pins: ToolPins | None = None,
        servers: list[str] | None = None,
        restart: Backoff | None = None,
    ) -> None:
        names = servers if servers is not None else list(config.servers)
        unknown = [n for n in names if n not in config.servers]
        if unknown:
            raise ValueError(
                f"unknown servers {unknown}; the configuration has {sorted(config.servers)}"
            )
        self.links = {
            n: ServerLink(
                config.servers[n], ui, policy, model, pins, restart=restart, on_change=self._changed
            )
            for n in names
        }
        self.ui = ui
        self.pins = pins
        self.names = ToolNames([])
        self._targets: dict[str, Target] = {}
        self._started = False
        self._shown: dict[str, tuple[LinkState, str | None]] = {}

    def _changed(self, link: ServerLink, change: StateChange) -> None:
        """Show the user transitions, not the churn of retries: connection attempts are
        quiet, and a server that stays down for the same reason is reported once."""
        shown = (change.state, change.detail)
        if change.state is LinkState.CONNECTING or (
            change.state is LinkState.DOWN and change.retry_in is None
        ):
            return  # the supervisor reports the loss with its retry delay a moment later
        if self._started and self._shown.get(link.name) != shown:
            self.ui.server_state(change)
        self._shown[link.name] = shown

    async def start(self, startup_timeout: float | None = None) -> None:
        """Connect to every enabled server at once; one failure never stops the others.
        Returns when all have answered or failed, or after `startup_timeout` seconds with
        those ready (None: wait for all); the others join when they answer."""
        for link in self.links.values():
            link.start()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(startup_timeout):
                await asyncio.gather(*(link.settled() for link in self.links.values()))
        self._started = True
        for link in self.links.values():
            if link.state is LinkState.DOWN:
                self.ui.warn(f"server {link.name!r} is unavailable: {link.detail}")
            elif link.state is LinkState.CONNECTING:
                self.ui.info(f"server {link.name!r} is still starting; its tools join when ready")
        self._rebuild()

    async def refresh(self) -> None:
        """Between rounds: re-list tools, drop the tools of servers that went down, add those
        of servers that came up."""
        await asyncio.gather(*(link.refresh() for link in self.links.values()))
        self._rebuild()

    async def reconnect(self, name: str) -> None:
        """Reconnect one server now and wait until it is up (or has failed again)."""
        link = self.links[name]
        link.reconnect_now()
        await link.until(LinkState.CONNECTING)
        await link.until(LinkState.READY, LinkState.DEGRADED, LinkState.DOWN)
        self._rebuild()

    async def wait_state(self, name: str, *states: LinkState) -> None:
        await self.links[name].until(*states)

    def _rebuild(self) -> None:
        up = [link for link in self.links.values() if link.up]
        self.names = ToolNames([(link.name, t.name) for link in up for t in link.tools])
        self._targets = {}
        for link in up:
            owned = set(link.config.host_owned)
            for tool in link.tools:
                schema = adapt(without(tool.input_schema, owned))
                self._targets[self.names.alias(link.name, tool.name)] = Target(link, tool, schema)

    def catalog(self) -> list[ToolSpec]:
        return [
            ToolSpec(alias, t.tool.description or t.tool.title or t.tool.name, t.schema.schema)
            for alias, t in self._targets.items()
        ]

    def lookup(self, alias: str) -> Target | None:
        return self._targets.get(alias)

    def notes(self) -> list[str]:
        """What the model should know about tools it no longer (or not yet) has. Never the
        server's own error text: it may carry anything the server printed."""
        out = []
        for link in self.links.values():
            if link.state is LinkState.DISABLED:
                continue
            if not link.up:
                out.append(
                    f"The {link.name!r} server is unavailable (reconnecting); its tools are "
                    "withdrawn until it is back."
                    if link.ever_ready
                    else f"The {link.name!r} server is still starting; its tools will be "
                    "offered when it is ready."
                )
            for change in link.withheld:
                out.append(
                    f"The tool {change.tool!r} of the {link.name!r} server is withheld: its "
                    "definition changed and awaits the user's approval."
                )
        return out

    def pending_changes(self) -> list[PinChange]:
        """Changed tool definitions withheld now, awaiting the user's approval."""
        return [c for link in self.links.values() for c in link.withheld]

    def approve(self, change: PinChange) -> bool:
        """Approve one change the user reviewed; the tool is offered from the next round."""
        if self.pins is None or not self.pins.approve(change.server, change.tool, change.digest):
            return False
        self.links[change.server].stale = True
        return True

    async def close(self) -> None:
        self._started = False
        await asyncio.gather(*(link.close() for link in self.links.values()))
