"""The host's MCP servers: one `Client` each, connected concurrently, failures isolated, tool
catalogues refreshed between turns (cache per `ttlMs`, invalidated by list_changed)."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

from ..client import Client, ClientError, Tool
from ..client.inputs import Elicitation
from ..protocol.errors import MCPError
from .auth_config import oauth_for
from .config import HostConfig, ServerConfig
from .consent import ConsentPolicy
from .conversation import AssistantMessage, Message, ToolSpec, UserMessage
from .models.base import ModelAdapter
from .naming import ToolNames
from .pins import ToolPins
from .schemas import AdaptedSchema, adapt, without
from .ui import HostUI


@dataclass(frozen=True, slots=True)
class Target:
    link: ServerLink
    tool: Tool
    schema: AdaptedSchema


class ServerLink:
    """One configured server and its connection."""

    def __init__(
        self,
        config: ServerConfig,
        ui: HostUI,
        policy: ConsentPolicy,
        model: ModelAdapter | None,
        pins: ToolPins | None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.ui = ui
        self.policy = policy
        self.model = model
        self.pins = pins
        self.client: Client | None = None
        self.tools: list[Tool] = []
        self.status = "disabled" if config.disabled else "idle"
        self.error: str | None = None
        self.stale = False
        #: Set whenever the server announces a tool list change (for callers that must see it).
        self.changed = asyncio.Event()
        self._listener: asyncio.Task[None] | None = None
        #: Ask the server for its log messages at this level (shown through `ui.info`).
        self.log_level: str | None = None

    def _log(self, level: str, data: Any, logger: str | None) -> None:
        text = data if isinstance(data, str) else repr(data)
        source = f"{self.name}/{logger}" if logger else self.name
        self.ui.info(f"{source} {level}: {text}")

    async def connect(self) -> None:
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
            log_level=self.log_level,
            on_log=self._log if self.log_level is not None else None,
        )
        try:
            await client.__aenter__()
            self.client = client
            await self.refresh()
        except BaseException as exc:
            await client.close()
            self.client = None
            self.status, self.error = "failed", f"{type(exc).__name__}: {exc}"
            if not isinstance(exc, Exception):
                raise
            return
        self.status, self.error = "connected", None
        caps = client.info.capabilities if client.info is not None else {}
        if (caps.get("tools") or {}).get("listChanged"):
            self._listener = asyncio.create_task(self._listen(client))

    async def _listen(self, client: Client) -> None:
        with contextlib.suppress(MCPError, ClientError, asyncio.CancelledError):
            async with client.subscribe(tools=True) as sub:
                async for _ in sub:
                    self.stale = True  # refreshed before the next model round
                    self.changed.set()

    async def refresh(self) -> None:
        assert self.client is not None
        self.tools = await self.client.list_tools()
        self.stale = False
        if self.pins is not None:
            for warning in self.pins.check(self.name, [t.raw for t in self.tools]):
                self.ui.warn(warning)

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
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._listener
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.close()
            self.client = None


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
    ) -> None:
        names = servers if servers is not None else list(config.servers)
        unknown = [n for n in names if n not in config.servers]
        if unknown:
            raise ValueError(
                f"unknown servers {unknown}; the configuration has {sorted(config.servers)}"
            )
        self.links = {n: ServerLink(config.servers[n], ui, policy, model, pins) for n in names}
        self.ui = ui
        self.names = ToolNames([])
        self._targets: dict[str, Target] = {}

    async def start(self) -> None:
        """Connect to every enabled server at once; one failure never stops the others."""
        links = [link for link in self.links.values() if link.status != "disabled"]
        await asyncio.gather(*(link.connect() for link in links))
        for link in links:
            if link.status == "failed":
                self.ui.warn(f"server {link.name!r} is unavailable: {link.error}")
        self._rebuild()

    async def refresh(self) -> None:
        """Between turns: re-list tools where a change was announced or the cache expired."""
        for link in self.links.values():
            if link.client is None:
                continue
            try:
                await link.refresh()
            except (MCPError, ClientError) as exc:
                link.status, link.error = "failed", str(exc)
                self.ui.warn(f"server {link.name!r} stopped answering: {exc}")
        self._rebuild()

    async def reconnect(self, name: str) -> None:
        link = self.links[name]
        await link.close()
        await link.connect()
        self._rebuild()

    def _rebuild(self) -> None:
        pairs = [
            (link.name, t.name)
            for link in self.links.values()
            if link.client is not None
            for t in link.tools
        ]
        self.names = ToolNames(pairs)
        self._targets = {}
        for link in self.links.values():
            if link.client is None:
                continue
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

    async def close(self) -> None:
        await asyncio.gather(*(link.close() for link in self.links.values()))
