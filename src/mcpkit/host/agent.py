"""The agent loop: model → tool calls → host checks and consent → `tools/call` → results →
model, until the model answers or the round limit is reached.

Each round offers the model what fits the agent's catalogue budget (`catalog`), plus the host
tools that are useful right now (`host_tools`); each result is fitted to the output budget
(`results`) before the model sees it."""

from __future__ import annotations

import asyncio
from typing import Any

from .audit import AuditLog
from .background import BackgroundCalls
from .background_store import BackgroundSettings
from .catalog import ToolCatalog, ToolSettings
from .connections import Fleet, Target
from .consent import ConsentPolicy, Decision, PendingCall
from .conversation import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResult,
    ToolResults,
    ToolSpec,
    UserMessage,
)
from .hooks import OnCall
from .host_tools import CALL_FOUND_TOOL, READ_RESOURCE, HostTools
from .instructions import with_instructions
from .models.base import ModelAdapter
from .pipeline import Call, EventBus, for_agent, to_ui
from .pipeline.budget import Budget
from .pipeline.consent import Consent
from .pipeline.present import tool_result
from .resources import ResourceIndex
from .results import DEFAULT_RESULT_TOKENS, ResultStore
from .search import ToolDoc
from .telemetry import OFF, HostTelemetry
from .tokens import SpecTokens, counter_for
from .ui import HostUI

#: Kept for callers of the old name.
DEFAULT_MAX_TOKENS = DEFAULT_RESULT_TOKENS


class Agent:
    def __init__(
        self,
        fleet: Fleet,
        model: ModelAdapter,
        ui: HostUI,
        policy: ConsentPolicy | None = None,
        *,
        system: str | None = None,
        max_rounds: int = 12,
        max_tool_tokens: int | None = None,
        name: str | None = None,
        audit: AuditLog | None = None,
        tools: ToolSettings | None = None,
        on_call: OnCall | None = None,
        telemetry: HostTelemetry | None = None,
        background: BackgroundSettings | None = None,
    ) -> None:
        self.fleet = fleet
        #: Spans per turn, round, model call and tool call (`OFF`: no-ops).
        self.telemetry = telemetry or OFF
        self.model = model
        self.ui = ui
        self.policy = policy or ConsentPolicy()
        self.system = system
        self.max_rounds = max_rounds
        self.name = name
        self.audit = audit
        self.on_call = on_call
        self.history: list[Message] = []
        settings = tools or ToolSettings()
        self.max_tool_tokens = max_tool_tokens or settings.result_budget
        self.catalog = ToolCatalog(settings, SpecTokens(counter_for(model.name)))
        self.results = ResultStore()
        self.resources = ResourceIndex(fleet)
        #: What happens to calls (decisions, refusals, progress, results, audit records).
        self.events = EventBus()
        #: Calls left running as their servers' tasks (`"host": {"background": ...}`).
        self.background = BackgroundCalls(
            background or BackgroundSettings(), fleet, self.events, name
        )
        self.host_tools = HostTools(
            self.catalog,
            self.results,
            self.resources,
            self._allowed,
            self.max_tool_tokens,
            self.background,
        )
        self.events.subscribe(to_ui(ui))
        self.consent = Consent(self.policy, lambda pending, call: ui.confirm(pending), self.events)
        self.pipeline = for_agent(
            lookup=self._lookup,
            consent=self.consent,
            bus=self.events,
            spans=self.telemetry,
            audit=audit,
            budget=Budget(self.max_tool_tokens, self.results),
            seen=self.resources.note,
            on_call=on_call,
        )

    def _lookup(self, alias: str) -> Target | None:
        """A tool the model may call now, by the name it was offered under."""
        return self.fleet.lookup(alias) if self.catalog.callable(alias) else None

    async def ask(self, text: str) -> str:
        """One user turn; returns the model's final answer."""
        return await self.send([UserMessage(text)], text)

    async def send(self, messages: list[Message], shown: str) -> str:
        """A turn made of `messages` (a prompt's, an attachment's), shown to the user as
        `shown`; returns the model's final answer."""
        self.ui.user(shown)
        self.history.extend(messages)
        with self.telemetry.turn(self.name):
            for number in range(1, self.max_rounds + 1):
                with self.telemetry.round(number):
                    reply = await self._round()
                if reply is not None:
                    return reply
        note = f"Stopped: this turn reached its limit of {self.max_rounds} model rounds."
        self.ui.warn(note)
        return note

    async def _round(self) -> str | None:
        """One model call and the tool calls it asks for; the final answer, if it is one."""
        # Between rounds: list_changed, expired catalogues, servers down, up or late.
        await self.fleet.refresh()
        # Background calls that ended since the last round: their results, once each.
        self.history.extend(self.background.arrived())
        system, tools = self._system(), await self.tools()
        with self.telemetry.model_call() as record:
            reply: AssistantMessage = await self.model.complete(system, self.history, tools)
            record.replied(reply.stop_reason, reply.usage)
        self.history.append(reply)
        if reply.text:
            self.ui.assistant(reply.text)
        if not reply.tool_calls:
            return reply.text
        # Parallel where the model asked for several calls at once.
        results = await asyncio.gather(*(self._run(call) for call in reply.tool_calls))
        self.history.append(ToolResults(list(results)))
        return None

    def _system(self) -> str | None:
        """The system prompt, trusted servers' instructions, and the host's notes on tools
        withdrawn or withheld."""
        system = with_instructions(self.system, self.fleet)
        notes = self.fleet.notes()
        if not notes:
            return system
        text = "Host notes:\n" + "\n".join(f"- {n}" for n in notes)
        return f"{system}\n\n{text}" if system else text

    async def tools(self) -> list[ToolSpec]:
        """The tool definitions of the next model request."""
        await self.resources.refresh()
        specs = self.fleet.catalog()
        docs = {}
        for spec in specs:
            target = self.fleet.lookup(spec.name)
            if target is not None:
                docs[spec.name] = ToolDoc.from_tool(
                    spec.name, target.link.name, target.tool.raw, target.schema.schema
                )
        self.catalog.update(specs, docs)
        # Found tools (when listed) last: the prefix before them stays the same (prompt cache).
        return self.catalog.fixed() + self.host_tools.specs() + self.catalog.found()

    async def _run(self, call: ToolCall) -> ToolResult:
        if call.name == CALL_FOUND_TOOL:  # the found tool's own call, its arguments checked
            call = self.host_tools.found_call(call) or call
        if not self.host_tools.handles(call.name):
            job = Call(call.name, call.id, call.arguments, agent=self.name)
            return await self.background.call(job, self.pipeline)
        with self.telemetry.tool_call(call.name, call.id) as record:
            own = PendingCall(call.name, "host", call.name, call.arguments, {}, True, call.id)
            if call.name != READ_RESOURCE:  # that one asks like a call to its server
                self.ui.tool_call(own, Decision.ALLOW)
            result = await self.host_tools.run(call)
            self.ui.tool_result(own, result)
            record.finished("error" if result.is_error else "ok")
            return result

    async def perform(
        self,
        target: Target,
        alias: str,
        call_id: str,
        arguments: dict[str, Any],
        *,
        caller: str = "model",
        app: str | None = None,
    ) -> ToolResult:
        """One call to a server's tool through this agent's pipeline (host-owned fields,
        consent, `on_call`, deadline, retry, audit, output budget), whoever asked for it: the
        model, or an MCP App through the web UI (`caller`, as the audit trail names it; `app`,
        the app instance, whose consent answer stands for its calls)."""
        call = Call(
            alias, call_id, arguments, caller=caller, agent=self.name, target=target, app=app
        )
        return await self._through(call)

    async def _through(self, call: Call) -> ToolResult:
        return tool_result(call.call_id, await self.pipeline(call))

    async def _allowed(self, pending: PendingCall) -> bool:
        """Consent for the host's own reads (read_resource), by the same policy."""
        return (await self.consent.rule(pending)).decision is Decision.ALLOW
