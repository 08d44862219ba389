"""The agent loop: model → tool calls → host checks and consent → `tools/call` → results →
model, until the model answers or the round limit is reached."""

from __future__ import annotations

import asyncio
from typing import Any

from ..client import ClientError
from ..protocol.errors import MCPError
from .connections import Fleet
from .consent import ConsentPolicy, Decision, PendingCall
from .content import DEFAULT_MAX_TOKENS, result_blocks
from .conversation import AssistantMessage, Message, ToolCall, ToolResult, ToolResults, UserMessage
from .models.base import ModelAdapter
from .ui import HostUI


def _error(call_id: str, text: str) -> ToolResult:
    return ToolResult(call_id, [{"type": "text", "text": text}], is_error=True)


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
    ) -> None:
        self.fleet = fleet
        self.model = model
        self.ui = ui
        self.policy = policy or ConsentPolicy()
        self.system = system
        self.max_rounds = max_rounds
        self.max_tool_tokens = max_tool_tokens
        self.history: list[Message] = []

    async def ask(self, text: str) -> str:
        """One user turn; returns the model's final answer."""
        self.ui.user(text)
        self.history.append(UserMessage(text))
        for _ in range(self.max_rounds):
            await self.fleet.refresh()  # list_changed or expired catalogues, between rounds
            reply: AssistantMessage = await self.model.complete(
                self.system, self.history, self.fleet.catalog()
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

    async def _run(self, call: ToolCall) -> ToolResult:
        target = self.fleet.lookup(call.name)
        if target is None:
            return _error(call.id, f"There is no tool named {call.name!r}.")
        link, tool = target.link, target.tool
        arguments = target.schema.to_server(call.arguments)
        owned = set(link.config.host_owned) & set(arguments)
        if owned:
            # Identity and similar fields come from configuration and credentials, never the model.
            self.ui.warn(f"refused {call.name}: the model tried to set host-owned {sorted(owned)}")
            return _error(
                call.id,
                f"The host refused this call: {', '.join(sorted(owned))} can only be set by the host.",
            )
        pending = PendingCall(
            call.name,
            link.name,
            tool.name,
            arguments,
            tool.annotations if link.config.trusted else {},
            link.config.trusted,
            call.id,
        )
        decision = self.policy.decide(pending)
        self.ui.tool_call(pending, decision)
        if decision is Decision.ASK:
            decision = Decision.ALLOW if await self.ui.confirm(pending) else Decision.DENY
        if decision is Decision.DENY:
            result = _error(call.id, "The user did not allow this tool call.")
            self.ui.tool_result(pending, result)
            return result
        sent: dict[str, Any] = dict(arguments)
        accepts = (tool.input_schema.get("properties") or {}).keys()
        sent.update(
            {k: v for k, v in link.config.host_owned.items() if v is not None and k in accepts}
        )
        if link.client is None:
            return _error(call.id, f"The server {link.name!r} is not connected.")
        try:
            raw = await link.client.call_tool(
                tool.name, sent, progress=lambda p, t, m: self.ui.progress(pending, p, t, m)
            )
            result = ToolResult(call.id, result_blocks(raw.raw, self.max_tool_tokens), raw.is_error)
        except MCPError as exc:
            result = _error(call.id, f"The server rejected the call: {exc.message}")
        except ClientError as exc:
            result = _error(call.id, f"The server could not complete the call: {exc}")
        self.ui.tool_result(pending, result)
        return result
