"""The host: several MCP servers behind one agent, with consent.

config = load_config("mcp.json")
async with Host(config, model=make_model("anthropic:claude-sonnet-4-5")) as host:
    answer = await host.agent(system="You help Northwind customers.").ask("Where is NW-1042?")
"""

from __future__ import annotations

from types import TracebackType

from .agent import Agent
from .catalog import ToolSettings
from .config import ConfigError, HostConfig, ServerConfig, load_config, parse_config
from .connections import Fleet
from .consent import ConsentPolicy, Decision, PendingCall
from .hooks import CallExtras, CallInfo, OnCall
from .models import ModelAdapter, make_model
from .naming import ToolNames, alias_for
from .pins import ToolPins
from .ui import HostUI


class Host:
    """A fleet of servers plus agents over it."""

    def __init__(
        self,
        config: HostConfig,
        *,
        model: ModelAdapter,
        ui: HostUI | None = None,
        policy: ConsentPolicy | None = None,
        pins: ToolPins | None = None,
        servers: list[str] | None = None,
        on_call: OnCall | None = None,
    ) -> None:
        """`on_call`: called before each tool call to add per-user `_meta`, headers or
        host-owned argument values (see `mcpkit.host.hooks`)."""
        if ui is None:
            from .terminal import TerminalUI

            ui = TerminalUI()
        self.ui = ui
        self.model = model
        self.policy = policy or ConsentPolicy()
        self.on_call = on_call
        self.fleet = Fleet(config, ui, self.policy, model=model, pins=pins, servers=servers)

    async def __aenter__(self) -> Host:
        await self.fleet.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.fleet.close()

    def agent(
        self,
        *,
        system: str | None = None,
        max_rounds: int = 12,
        tools: ToolSettings | None = None,
        max_tool_tokens: int | None = None,
    ) -> Agent:
        """An agent over the fleet. `tools`: its filters and catalogue budget (an agent's
        `"tools"` entry in the config: `ToolSettings.from_config`); `max_tool_tokens`: the
        output budget of one tool result (default: the settings' `resultBudget`)."""
        return Agent(
            self.fleet,
            self.model,
            self.ui,
            self.policy,
            system=system,
            max_rounds=max_rounds,
            tools=tools,
            on_call=self.on_call,
            max_tool_tokens=max_tool_tokens,
        )


__all__ = [
    "Agent",
    "CallExtras",
    "CallInfo",
    "ConfigError",
    "ConsentPolicy",
    "Decision",
    "Fleet",
    "Host",
    "HostConfig",
    "HostUI",
    "ModelAdapter",
    "OnCall",
    "PendingCall",
    "ServerConfig",
    "ToolNames",
    "ToolPins",
    "ToolSettings",
    "alias_for",
    "load_config",
    "make_model",
    "parse_config",
]
