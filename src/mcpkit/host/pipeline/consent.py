"""Consent: the rules decide, or the user is asked: yes, no, or yes for this session
(GEN-01/03, TOOL-01/02). The strictest rule wins; the ruling says who made it (`host.consent`).

Each front end brings only how it asks (`ask`: the terminal's prompt, the page's dialog, a form
sent to the gateway's calling client). "Yes for this session" is remembered in the policy, or,
where several users share one front end (`holder`: whose session a call belongs to), per
holder, and never for a call that belongs to nobody in particular.

An MCP App is asked about once, when it is rendered (`admit_app`): where the rules would ask
about any tool the app may call, the user answers for the app instance, and that answer
stands in for the questions its calls would raise (deny rules still deny), so the app's own
request timeout is never spent waiting for a person."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field

from ..consent import ConsentPolicy, Decision, PendingCall, Ruling
from ..events import CallAllowed, CallDecided, CallFinished, EventBus
from ..ui import Answer
from .present import error_result
from .record import Call, Next, Outcome, Refused, denied

#: `ask(pending, call)`; `call` is None for the host's own reads (`read_resource`). Raising
#: `Refused` means the user cannot be asked: the call is denied as "non-interactive".
Ask = Callable[[PendingCall, Call | None], Awaitable[Answer]]
#: At most this many holders keep session grants (the oldest forgotten first); as many app
#: instances keep the user's answer for their calls.
MAX_GRANT_HOLDERS = 4096


def refusals(owner: str, non_interactive: str) -> dict[str, str]:
    return {
        "user": "The user did not allow this tool call.",
        "non-interactive": f"The {owner} denied this call: it needs the user's approval, and "
        f"{non_interactive}.",
        "rules": f"The {owner}'s consent rules do not allow this tool call.",
        "app": "The user did not allow this app to call its server's tools.",
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
    #: The user's answer for each app instance (`admit_app`), by the app's id.
    apps: dict[str, bool] = field(default_factory=dict, init=False)

    async def admit_app(
        self, app: str, tools: Sequence[PendingCall], ask: Callable[[], Awaitable[bool]]
    ) -> Ruling:
        """Whether an app instance may call the tools it may see (`tools`, its own server's,
        judged with no arguments), decided once before it runs: by the rules where none of
        them would ask (allowed if any is allowed), else by the user's answer to `ask`, kept
        for the app's calls. The ruling is what the page shows."""
        rulings = [self.policy.judge(p) for p in tools]
        if not any(r.decision is Decision.ASK for r in rulings):
            allowed = next((r for r in rulings if r.decision is Decision.ALLOW), None)
            return allowed or (rulings[0] if rulings else Ruling(Decision.ALLOW, "rules"))
        answer = await ask()
        self.apps[app] = answer
        while len(self.apps) > MAX_GRANT_HOLDERS:
            del self.apps[next(iter(self.apps))]  # the oldest app's answer
        return Ruling(Decision.ALLOW if answer else Decision.DENY, "user")

    def _for_app(self, call: Call | None) -> Ruling | None:
        """The answer given for the app making `call`, if any (it stands in for asking)."""
        answer = self.apps.get(call.app) if call is not None and call.app else None
        if answer is None:
            return None
        return Ruling(Decision.ALLOW if answer else Decision.DENY, "app")

    async def rule(self, pending: PendingCall, call: Call | None = None) -> Ruling:
        """The ruling on one call (also for the host's own reads: `read_resource`)."""
        ruling = self.policy.judge(pending)
        if ruling.decision is Decision.ASK:
            ruling = self._for_app(call) or ruling
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
