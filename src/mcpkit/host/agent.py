"""The agent loop: model → tool calls → host checks and consent → `tools/call` → results →
model, until the model answers or the round limit is reached."""

from __future__ import annotations

import asyncio

from .audit import AuditLog, start_audit
from .calls import invoke
from .connections import Fleet
from .consent import ConsentPolicy, Decision, PendingCall, Ruling
from .content import DEFAULT_MAX_TOKENS, result_blocks
from .conversation import AssistantMessage, Message, ToolCall, ToolResult, ToolResults, UserMessage
from .models.base import ModelAdapter
from .ui import HostUI

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
        max_tool_tokens: int = DEFAULT_MAX_TOKENS,
        name: str | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self.fleet = fleet
        self.model = model
        self.ui = ui
        self.policy = policy or ConsentPolicy()
        self.system = system
        self.max_rounds = max_rounds
        self.max_tool_tokens = max_tool_tokens
        self.name = name
        self.audit = audit
        self.history: list[Message] = []

    async def ask(self, text: str) -> str:
        """One user turn; returns the model's final answer."""
        self.ui.user(text)
        self.history.append(UserMessage(text))
        for _ in range(self.max_rounds):
            # Between rounds: list_changed, expired catalogues, servers down, up or late.
            await self.fleet.refresh()
            reply: AssistantMessage = await self.model.complete(
                self._system(), self.history, self.fleet.catalog()
            )
            self.history.append(reply)
            if reply.text:
                self.ui.assistant(reply.text)
            if not reply.tool_calls:
                return reply.text
            # Parallel where the model asked for several calls at once.
            results = await asyncio.gather(*(self._run(call) for call in reply.tool_calls))
            self.history.append(ToolResults(list(results)))
        note = f"Stopped: this turn reached its limit of {self.max_rounds} model rounds."
        self.ui.warn(note)
        return note

    def _system(self) -> str | None:
        """The system prompt, with the host's notes on tools withdrawn or withheld."""
        notes = self.fleet.notes()
        if not notes:
            return self.system
        text = "Host notes:\n" + "\n".join(f"- {n}" for n in notes)
        return f"{self.system}\n\n{text}" if self.system else text

    async def _run(self, call: ToolCall) -> ToolResult:
        target = self.fleet.lookup(call.name)
        if target is None:
            return _error(call.id, f"There is no tool named {call.name!r}.")
        link, tool = target.link, target.tool
        arguments = target.schema.to_server(call.arguments)
        pending = PendingCall(
            call.name,
            link.name,
            tool.name,
            arguments,
            tool.annotations if link.config.trusted else {},
            link.config.trusted,
            call.id,
        )
        audit = start_audit(self.audit, self.name, link.name, tool.name, call.id, arguments)
        owned = sorted(set(link.config.host_owned) & set(arguments))
        if owned:
            # Identity and similar fields come from configuration and credentials, never the model.
            self.ui.warn(f"refused {call.name}: the model tried to set host-owned {owned}")
            audit.decided("deny", "host-owned")
            audit.finished("denied")
            return _error(
                call.id,
                f"The host refused this call: {', '.join(owned)} can only be set by the host.",
            )
        ruling = await self._consent(pending)
        audit.decided(ruling.decision.value, ruling.by)
        if ruling.decision is Decision.DENY:
            result = _error(
                call.id,
                _REFUSED.get(ruling.by, "The host's consent rules do not allow this tool call."),
            )
            audit.finished("denied")
        else:
            done = await invoke(target, pending, self.ui)
            if done.raw is None:
                result = _error(call.id, done.error or "The call failed.")
            else:
                blocks = result_blocks(done.raw.raw, self.max_tool_tokens)
                result = ToolResult(call.id, blocks, done.raw.is_error, done.raw.raw)
            audit.finished(
                done.kind, (done.error or _first_line(result)) if result.is_error else None
            )
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
