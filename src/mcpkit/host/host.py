"""`Host`: several MCP servers behind one agent, with consent.

config = load_config("mcp.json")
async with Host(config, model=make_model("anthropic:claude-sonnet-4-5")) as host:
    answer = await host.agent(system="You help Northwind customers.").ask("Where is NW-1042?")
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..client.lifecycle import AsyncResource
from ..telemetry.config import resolve as resolve_telemetry
from .agent import Agent
from .audit import AuditLog
from .catalog import ToolSettings
from .config import HostConfig
from .connections import Fleet
from .consent import ConsentPolicy
from .hooks import OnCall
from .link import ClientFeatures
from .logfile import LogFile
from .models import ModelAdapter
from .pins import ToolPins
from .records import RecordStore, store_for
from .settings import HostSettings, agent_consent, agent_tools
from .ui import HostUI

if TYPE_CHECKING:
    from ..telemetry.config import Telemetry
    from .telemetry import HostTelemetry


class Host(AsyncResource):
    """A fleet of servers plus agents over it.

    `settings` default to the config's `"host"` object (start-up deadline, restart backoff,
    audit log, log file, pin file); `pins` and `audit` given here win over it. `features`
    are what the UI adds to each server connection (a web UI declares MCP Apps).
    """

    def __init__(
        self,
        config: HostConfig,
        *,
        model: ModelAdapter,
        ui: HostUI | None = None,
        policy: ConsentPolicy | None = None,
        pins: ToolPins | None = None,
        servers: list[str] | None = None,
        settings: HostSettings | None = None,
        audit: AuditLog | None = None,
        on_call: OnCall | None = None,
        features: ClientFeatures | None = None,
        telemetry: bool | Telemetry | None = None,
        records: RecordStore | None = None,
    ) -> None:
        """`records`: where lazy servers' records are kept (default: `host.records`, if on).
        `on_call`: called before each tool call to add per-user `_meta`, headers or
        host-owned argument values (see `mcpkit.host.hooks`).
        `telemetry`: OpenTelemetry spans for each turn, round, model call and tool call, and
        the clients' (`mcpkit[otel]`); None follows `MCPKIT_TELEMETRY`. Baggage goes only to
        trusted servers and those whose entry says `"baggage": true`."""
        if ui is None:
            from .terminal import TerminalUI

            ui = TerminalUI()
        self.config = config
        self.settings = settings or HostSettings.from_config(config)
        self.ui = ui
        self.model = model
        rules = {name: server.consent for name, server in config.servers.items()}
        base = policy or ConsentPolicy()
        self.policy = replace(base, servers={**rules, **base.servers})
        if pins is None and self.settings.pins is not None:
            pins = ToolPins(self.settings.pins)
        if audit is None and self.settings.audit is not None:
            audit = AuditLog(self.settings.audit)
        self.audit = audit
        self.on_call = on_call
        config_telemetry = resolve_telemetry(telemetry)
        self.telemetry = _host_telemetry(config_telemetry, model.name)
        records = records or store_for(self.settings)
        self.fleet = Fleet(
            config,
            ui,
            self.policy,
            model=model,
            pins=pins,
            servers=servers,
            restart=self.settings.restart,
            retry=self.settings.retry,
            features=features,
            telemetry=config_telemetry,
            records=records,
        )
        self._log = LogFile(self.settings.log) if self.settings.log is not None else None
        self._agents: list[Agent] = []

    async def open(self) -> None:
        """What `async with host:` does first: start every server (within the start-up
        deadline)."""
        if self.telemetry is not None and self.telemetry.config.uses_globals:
            from ..telemetry.setup import ensure_configured

            ensure_configured(self.telemetry.config.service_name or "mcpkit-host")
        if self._log is not None:
            self._log.open()
        await self.fleet.start(self.settings.startup_timeout)

    async def close(self) -> None:
        try:
            for agent in self._agents:  # background tasks stay the servers' (TASK-09)
                await agent.background.close()
            await self.fleet.close()
        finally:
            if self._log is not None:
                self._log.close()

    def agent(
        self,
        *,
        system: str | None = None,
        max_rounds: int = 12,
        name: str | None = None,
        tools: ToolSettings | None = None,
        max_tool_tokens: int | None = None,
    ) -> Agent:
        """An agent; `name` picks its entry in the config's `agents` (its consent rules and
        its `tools`: filters, catalogue budget, result budget, unless `tools` is given).
        `max_tool_tokens`: the output budget of one tool result (default: `resultBudget`)."""
        policy = self.policy.for_agent(agent_consent(self.config, name)) if name else self.policy
        made = Agent(
            self.fleet,
            self.model,
            self.ui,
            policy,
            system=system,
            max_rounds=max_rounds,
            name=name,
            audit=self.audit,
            tools=tools or agent_tools(self.config, name),
            on_call=self.on_call,
            max_tool_tokens=max_tool_tokens,
            telemetry=self.telemetry,
            background=self.settings.background,
        )
        self._agents.append(made)
        return made


def _host_telemetry(config: Telemetry | None, model: str) -> HostTelemetry | None:
    """The host's spans, when telemetry is on (`mcpkit[otel]` is imported only then)."""
    if config is None:
        return None
    from .telemetry import HostTelemetry

    return HostTelemetry(config, model)
