"""The agent loop: model → tool calls → host checks and consent → `tools/call` → results →
model, until the model answers or the round limit is reached.

Each round offers the model what fits the agent's catalogue budget (`catalog`), plus the host
tools that are useful right now (`host_tools`); each result is fitted to the output budget
(`results`) before the model sees it."""

from __future__ import annotations

import asyncio
from typing import Any

from ..client import ClientError
from ..protocol.errors import MCPError
from .catalog import ToolCatalog, ToolSettings
from .connections import Fleet
from .consent import ConsentPolicy, Decision, PendingCall
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
from .hooks import CallInfo, HookRefused, OnCall, run_hook
from .host_tools import HostTools
from .instructions import with_instructions
from .models.base import ModelAdapter
from .resources import ResourceIndex
from .results import DEFAULT_RESULT_TOKENS, ResultStore, fit
from .search import ToolDoc
from .tokens import SpecTokens, counter_for
from .ui import HostUI

#: Kept for callers of the old name.
DEFAULT_MAX_TOKENS = DEFAULT_RESULT_TOKENS


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
        max_tool_tokens: int | None = None,
        tools: ToolSettings | None = None,
        on_call: OnCall | None = None,
    ) -> None:
        self.fleet = fleet
        self.model = model
        self.ui = ui
        self.policy = policy or ConsentPolicy()
        self.system = system
        self.max_rounds = max_rounds
        settings = tools or ToolSettings()
        self.max_tool_tokens = max_tool_tokens or settings.result_budget
        self.on_call = on_call
        self.history: list[Message] = []
        self.catalog = ToolCatalog(settings, SpecTokens(counter_for(model.name)))
        self.results = ResultStore()
        self.resources = ResourceIndex(fleet)
        self.host_tools = HostTools(
            self.catalog, self.results, self.resources, self._consent, self.max_tool_tokens
        )

    async def ask(self, text: str) -> str:
        """One user turn; returns the model's final answer."""
        return await self.send([UserMessage(text)], text)

    async def send(self, messages: list[Message], shown: str) -> str:
        """A turn made of `messages` (a prompt's, an attachment's), shown to the user as
        `shown`; returns the model's final answer."""
        self.ui.user(shown)
        self.history.extend(messages)
        return await self._loop()

    async def _loop(self) -> str:
        for _ in range(self.max_rounds):
            await self.fleet.refresh()  # list_changed or expired catalogues, between rounds
            reply: AssistantMessage = await self.model.complete(
                self.system_prompt(), self.history, await self.tools()
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

    def system_prompt(self) -> str | None:
        """The agent's system prompt plus the instructions of trusted servers."""
        return with_instructions(self.system, self.fleet)

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

    async def _consent(self, pending: PendingCall) -> bool:
        decision = self.policy.decide(pending)
        self.ui.tool_call(pending, decision)
        if decision is Decision.ASK:
            decision = Decision.ALLOW if await self.ui.confirm(pending) else Decision.DENY
        return decision is Decision.ALLOW

    async def _run(self, call: ToolCall) -> ToolResult:
        if self.host_tools.handles(call.name):
            own = PendingCall(call.name, "host", call.name, call.arguments, {}, True, call.id)
            if call.name != "read_resource":  # that one asks like a tool call of its server
                self.ui.tool_call(own, Decision.ALLOW)
            result = await self.host_tools.run(call)
            self.ui.tool_result(own, result)
            return result
        target = self.fleet.lookup(call.name)
        if target is None or not self.catalog.callable(call.name):
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
        if not await self._consent(pending):
            result = _error(call.id, "The user did not allow this tool call.")
            self.ui.tool_result(pending, result)
            return result
        sent: dict[str, Any] = dict(arguments)
        accepts = (tool.input_schema.get("properties") or {}).keys()
        sent.update(
            {k: v for k, v in link.config.host_owned.items() if v is not None and k in accepts}
        )
        meta: dict[str, Any] = {}
        headers: dict[str, str] = {}
        if self.on_call is not None:
            try:
                extras = await run_hook(
                    self.on_call,
                    CallInfo(link.name, tool.name, call.name, arguments),
                    link.config.host_owned,
                )
            except HookRefused as exc:
                self.ui.warn(f"refused {call.name}: {exc}")
                return _error(call.id, f"The host refused this call: {exc}")
            sent.update(extras.arguments)
            meta, headers = extras.meta, extras.headers
        if link.client is None:
            return _error(call.id, f"The server {link.name!r} is not connected.")
        try:
            raw = await link.client.call_tool(
                tool.name,
                sent,
                progress=lambda p, t, m: self.ui.progress(pending, p, t, m),
                meta=meta or None,
                headers=headers or None,
            )
            blocks = result_blocks(raw.raw)
            self.resources.note(link.name, blocks)
            fitted = fit(blocks, self.max_tool_tokens, self.results)
            result = ToolResult(call.id, fitted.model, raw.is_error, fitted.user_only)
        except MCPError as exc:
            result = _error(call.id, f"The server rejected the call: {exc.message}")
        except ClientError as exc:
            result = _error(call.id, f"The server could not complete the call: {exc}")
        self.ui.tool_result(pending, result)
        return result
