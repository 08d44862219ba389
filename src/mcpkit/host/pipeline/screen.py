"""Tool results screened before the model (or the gateway's caller) reads them: hidden
characters removed (`host.screening`), the caller told in a note at the end of the result, the
user in a `ContentScreened` event, the log in a warning. A result is never held back: what a
result says is the server's answer, judged by the model with the note beside it (TOOL-25:
validate results before the model sees them)."""

from __future__ import annotations

import logging
from dataclasses import replace

from ...client import CallResult
from ..content import result_blocks
from ..events import ContentScreened, EventBus
from ..screening import removed_note, screen_result
from .record import Call, Next, Outcome

log = logging.getLogger("mcpkit.host.screening")


class Screen:
    def __init__(self, bus: EventBus) -> None:
        self.bus = bus

    async def __call__(self, call: Call, next: Next) -> Outcome:
        outcome = await next(call)
        if outcome.raw is None:
            return outcome
        cleaned, findings = screen_result(outcome.raw.raw)
        if not findings:
            return outcome
        note = {"type": "text", "text": removed_note(findings)}
        # The blocks the model reads (structured content as text where no text said it), so
        # the note never hides what the text-less result carried.
        cleaned["content"] = [*result_blocks(cleaned), note]
        said = "; ".join(str(f) for f in findings)
        log.warning("hidden characters removed from the result of %s: %s", call.alias, said)
        self.bus.publish(ContentScreened(call.pending(), said))
        result = CallResult.from_wire(cleaned, outcome.raw.idempotency_key)
        return replace(outcome, raw=result)
