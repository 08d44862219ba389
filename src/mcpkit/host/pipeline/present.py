"""The caller's view of an outcome: a `ToolResult` (the model's, an app's), announced once as
`CallFinished` for the terminal, the web UI and the log."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..content import result_blocks
from ..conversation import ToolResult
from ..events import CallFinished, EventBus
from .record import Call, Next, Outcome


def error_result(call_id: str, text: str) -> ToolResult:
    return ToolResult(call_id, [{"type": "text", "text": text}], is_error=True)


def tool_result(call_id: str, outcome: Outcome) -> ToolResult:
    """The outcome as a tool result: the fitted blocks where the output budget ran."""
    if outcome.raw is None:
        return error_result(call_id, outcome.error or "The call failed.")
    raw = outcome.raw
    if outcome.fitted is not None:
        return ToolResult(
            call_id, outcome.fitted.model, raw.is_error, outcome.fitted.user_only, raw.raw
        )
    return ToolResult(call_id, result_blocks(raw.raw), raw.is_error, [], raw.raw)


def first_line(result: ToolResult) -> str:
    text = next((str(b.get("text", "")) for b in result.content if b.get("type") == "text"), "")
    return text.strip().split("\n", 1)[0][:200]


class Present:
    """Announces each finished call (a denial announces itself: `Consent`; a refusal is a
    `CallRefused`). `seen(server, blocks)`: the result's content blocks, for whoever keeps an
    index of what results linked to (the agent's resource index)."""

    def __init__(
        self, bus: EventBus, seen: Callable[[str, list[dict[str, Any]]], None] | None = None
    ) -> None:
        self.bus = bus
        self.seen = seen

    async def __call__(self, call: Call, next: Next) -> Outcome:
        outcome = await next(call)
        if outcome.kind == "denied":
            return outcome
        if self.seen is not None and outcome.raw is not None:
            self.seen(call.resolved.link.name, result_blocks(outcome.raw.raw))
        self.bus.publish(CallFinished(call.pending(), tool_result(call.call_id, outcome)))
        return outcome
