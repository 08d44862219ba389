"""Consent: the rules decide, or the user is asked: yes, no, or yes for this session
(GEN-01/03, TOOL-01/02). The strictest rule wins; the ruling says who made it (`host.consent`).

Each front end brings only how it asks (`ask`: the terminal's prompt, the page's dialog, a form
sent to the gateway's calling client). "Yes for this session" is remembered in the policy, or,
where several users share one front end (`holder`: whose session a call belongs to), per
holder, and never for a call that belongs to nobody in particular."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field

from ..consent import ConsentPolicy, Decision, PendingCall, Ruling
from ..events import CallAllowed, CallDecided, CallFinished, EventBus
from ..ui import Answer
from .present import error_result
from .record import Call, Next, Outcome, Refused, denied

#: `ask(pending, call)`; `call` is None for the host's own reads (`read_resource`). Raising
#: `Refused` means the user cannot be asked: the call is denied as "non-interactive".
Ask = Callable[[PendingCall, Call | None], Awaitable[Answer]]
#: At most this many holders keep session grants (the oldest forgotten first).
MAX_GRANT_HOLDERS = 4096


def refusals(owner: str, non_interactive: str) -> dict[str, str]:
    return {
        "user": "The user did not allow this tool call.",
        "non-interactive": f"The {owner} denied this call: it needs the user's approval, and "
        f"{non_interactive}.",
        "rules": f"The {owner}'s consent rules do not allow this tool call.",
    }


HOST_REFUSALS = refusals("host", "this session is non-interactive")


@dataclass(eq=False)
class Consent:
    """The consent policy of one front end: `policy` rules, `ask` asks, `bus` hears both;
    `texts` are the refusals the caller reads (by who refused)."""

    policy: ConsentPolicy
    ask: Ask
    bus: EventBus
    _: KW_ONLY
    texts: Mapping[str, str] = field(default_factory=lambda: HOST_REFUSALS)
    holder: Callable[[Call], str | None] | None = None
    #: "Yes for this session" answers, by holder (with `holder` only).
    granted: dict[str, set[str]] = field(default_factory=dict, init=False)

    async def rule(self, pending: PendingCall, call: Call | None = None) -> Ruling:
        """The ruling on one call (also for the host's own reads: `read_resource`)."""
        ruling = self.policy.judge(pending)
        self.bus.publish(CallDecided(pending, ruling.decision))
        if ruling.decision is Decision.ASK:
            ruling = await self._asked(pending, call)
        if ruling.decision is Decision.ALLOW:
            self.bus.publish(CallAllowed(pending, ruling.by))
        return ruling

    async def _asked(self, pending: PendingCall, call: Call | None) -> Ruling:
        holder = self.holder(call) if self.holder is not None and call is not None else None
        if holder is not None and pending.alias in self.granted.get(holder, ()):
            return Ruling(Decision.ALLOW, "session")
        try:
            answer = await self.ask(pending, call)
        except Refused:
            return Ruling(Decision.DENY, "non-interactive")
        if answer == "session" and self.holder is None:
            self.policy.grant(pending)
        elif answer == "session" and holder is not None:
            self.granted.setdefault(holder, set()).add(pending.alias)
            while len(self.granted) > MAX_GRANT_HOLDERS:
                del self.granted[next(iter(self.granted))]  # the oldest holder's grants
        return Ruling(Decision.ALLOW if answer else Decision.DENY, "user")

    async def __call__(self, call: Call, next: Next) -> Outcome:
        pending = call.pending()
        call.ruling = await self.rule(pending, call)
        if call.ruling.decision is Decision.DENY:
            text = self.texts.get(call.ruling.by, self.texts["rules"])
            self.bus.publish(CallFinished(pending, error_result(call.call_id, text)))
            return denied(text)
        return await next(call)
