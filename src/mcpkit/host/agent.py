"""The agent loop: model → tool calls → host checks and consent → `tools/call` → results →
model, until the model answers or the round limit is reached.

Each round offers the model what fits the agent's catalogue budget (`catalog`), plus the host
tools that are useful right now (`host_tools`); each result is fitted to the output budget
(`results`) before the model sees it."""

from __future__ import annotations

import asyncio
from typing import Any

from .audit import AuditLog, start_audit
from .calls import invoke
from .catalog import ToolCatalog, ToolSettings
from .connections import Fleet, Target
from .consent import ConsentPolicy, Decision, PendingCall, Ruling
from .content import result_blocks
from .conversation import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResult,
    ToolResults,
    ToolSpec,
    UserMessage,
)
from .hooks import CallExtras, CallInfo, HookRefused, OnCall, run_hook
from .host_tools import READ_RESOURCE, HostTools
from .instructions import with_instructions
from .models.base import ModelAdapter
from .resources import ResourceIndex
from .results import DEFAULT_RESULT_TOKENS, ResultStore, fit
from .search import ToolDoc
from .telemetry import OFF, CallRecord, HostTelemetry
from .tokens import SpecTokens, counter_for
from .ui import HostUI

#: Kept for callers of the old name.
DEFAULT_MAX_TOKENS = DEFAULT_RESULT_TOKENS

_REFUSED = {
    "user": "The user did not allow this tool call.",
    "non-interactive": "The host denied this call: it needs the user's approval, and this "
    "session is non-interactive.",
}


def _error(call_id: str, text: str) -> ToolResult:
    return ToolResult(call_id, [{"type": "text", "text": text}], is_error=True)


def _first_line(result: ToolResult) -> str:
    text = next((str(b.get("text", "")) for b in result.content if b.get("type") == "text"), "")
    return text.strip().split("\n", 1)[0][:200]


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
        self.host_tools = HostTools(
            self.catalog, self.results, self.resources, self._allowed, self.max_tool_tokens
        )

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
        return self.catalog.offer() + self.host_tools.specs()

    async def _run(self, call: ToolCall) -> ToolResult:
        with self.telemetry.tool_call(call.name, call.id) as record:
            result = await self._call(call, record)
            if record.outcome is None:
                record.finished("error" if result.is_error else "ok")
            return result

    async def _call(self, call: ToolCall, record: CallRecord) -> ToolResult:
        if self.host_tools.handles(call.name):
            own = PendingCall(call.name, "host", call.name, call.arguments, {}, True, call.id)
            if call.name != READ_RESOURCE:  # that one asks like a call to its server
                self.ui.tool_call(own, Decision.ALLOW)
            result = await self.host_tools.run(call)
            self.ui.tool_result(own, result)
            return result
        target = self.fleet.lookup(call.name)
        if target is None or not self.catalog.callable(call.name):
            return _error(call.id, f"There is no tool named {call.name!r}.")
        if not target.link.up:  # restarting: say when to try again, before any consent
            return _error(call.id, target.link.unavailable())
        arguments = target.schema.to_server(call.arguments)
        return await self.perform(target, call.name, call.id, arguments, record=record)

    async def perform(
        self,
        target: Target,
        alias: str,
        call_id: str,
        arguments: dict[str, Any],
        *,
        caller: str = "model",
        record: CallRecord | None = None,
    ) -> ToolResult:
        """One call to a server's tool under this agent's rules (host-owned fields, consent,
        `on_call`, deadline, audit, output budget), whoever asked for it: the model, or an
        MCP App through the web UI (`caller`, as the audit trail names it). `record`: the
        model's tool call span; a call without one (an app's) gets a span of its own."""
        if record is None:
            with self.telemetry.tool_call(alias, call_id) as record:
                return await self.perform(
                    target, alias, call_id, arguments, caller=caller, record=record
                )
        link, tool = target.link, target.tool
        record.target(link.name, tool.name)
        pending = PendingCall(
            alias,
            link.name,
            tool.name,
            arguments,
            tool.annotations if link.config.trusted else {},
            link.config.trusted,
            call_id,
        )
        who = self.name if caller == "model" else caller
        audit = start_audit(self.audit, who, link.name, tool.name, call_id, arguments)
        owned = sorted(set(link.config.host_owned) & set(arguments))
        if owned:
            # Identity and similar fields come from configuration and credentials, never the model.
            self.ui.warn(f"refused {alias}: the {caller} tried to set host-owned {owned}")
            audit.decided("deny", "host-owned")
            self.telemetry.consent(link.name, tool.name, "deny", "host-owned")
            audit.finished("denied")
            record.finished("denied")
            return _error(
                call_id,
                f"The host refused this call: {', '.join(owned)} can only be set by the host.",
            )
        ruling = await self._consent(pending)
        audit.decided(ruling.decision.value, ruling.by)
        self.telemetry.consent(link.name, tool.name, ruling.decision.value, ruling.by)
        if ruling.decision is Decision.DENY:
            record.finished("denied")
            result = _error(
                call_id,
                _REFUSED.get(ruling.by, "The host's consent rules do not allow this tool call."),
            )
            audit.finished("denied")
            self.ui.tool_result(pending, result)
            return result
        extras = CallExtras()
        if self.on_call is not None:
            try:
                info = CallInfo(link.name, tool.name, alias, arguments)
                extras = await run_hook(self.on_call, info, link.config.host_owned)
            except HookRefused as exc:
                self.ui.warn(f"refused {alias}: {exc}")
                audit.finished("denied")
                record.finished("denied")
                return _error(call_id, f"The host refused this call: {exc}")
        done = await invoke(target, pending, self.ui, extras)
        if done.raw is None:
            result = _error(call_id, done.error or "The call failed.")
        else:
            blocks = result_blocks(done.raw.raw)
            self.resources.note(link.name, blocks)
            fitted = fit(blocks, self.max_tool_tokens, self.results)
            result = ToolResult(
                call_id, fitted.model, done.raw.is_error, fitted.user_only, done.raw.raw
            )
        error = (done.error or _first_line(result)) if result.is_error else None
        audit.finished(done.kind, error, key=done.key, attempts=done.attempts)
        record.finished(done.kind)
        self.ui.tool_result(pending, result)
        return result

    async def _consent(self, pending: PendingCall) -> Ruling:
        """The policy decides, or asks the user: yes, no, or yes for this session."""
        ruling = self.policy.judge(pending)
        self.ui.tool_call(pending, ruling.decision)
        if ruling.decision is not Decision.ASK:
            return ruling
        answer = await self.ui.confirm(pending)
        if answer == "session":
            self.policy.grant(pending)
        return Ruling(Decision.ALLOW if answer else Decision.DENY, "user")

    async def _allowed(self, pending: PendingCall) -> bool:
        """Consent for the host's own reads (read_resource), by the same policy."""
        return (await self._consent(pending)).decision is Decision.ALLOW
