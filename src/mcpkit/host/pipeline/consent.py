"""Consent: the rules decide, or the user is asked: yes, no, or yes for this session
(GEN-01/03, TOOL-01/02). The strictest rule wins; the ruling says who made it (`host.consent`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..consent import ConsentPolicy, Decision, PendingCall, Ruling
from ..ui import Answer
from .events import CallAllowed, CallDecided, CallFinished, EventBus
from .present import error_result
from .record import Call, Next, Outcome, denied

REFUSED = {
    "user": "The user did not allow this tool call.",
    "non-interactive": "The host denied this call: it needs the user's approval, and this "
    "session is non-interactive.",
}
RULES_DENY = "The host's consent rules do not allow this tool call."


class Consent:
    """`ask(call)`: the user's answer when the rules say ask."""

    def __init__(
        self,
        policy: ConsentPolicy,
        ask: Callable[[PendingCall], Awaitable[Answer]],
        bus: EventBus,
    ) -> None:
        self.policy = policy
        self.ask = ask
        self.bus = bus

    async def rule(self, pending: PendingCall) -> Ruling:
        """The ruling on one call (also for the host's own reads: `read_resource`)."""
        ruling = self.policy.judge(pending)
        self.bus.publish(CallDecided(pending, ruling.decision))
        if ruling.decision is Decision.ASK:
            answer = await self.ask(pending)
            if answer == "session":
                self.policy.grant(pending)
            ruling = Ruling(Decision.ALLOW if answer else Decision.DENY, "user")
        if ruling.decision is Decision.ALLOW:
            self.bus.publish(CallAllowed(pending, ruling.by))
        return ruling

    async def __call__(self, call: Call, next: Next) -> Outcome:
        pending = call.pending()
        call.ruling = await self.rule(pending)
        if call.ruling.decision is Decision.DENY:
            text = REFUSED.get(call.ruling.by, RULES_DENY)
            self.bus.publish(CallFinished(pending, error_result(call.call_id, text)))
            return denied(text)
        return await next(call)
