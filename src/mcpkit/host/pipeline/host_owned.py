"""Host-owned arguments: identity and the like come from configuration and credentials, never
from the caller. A call that sets one is refused; the others are filled in for the tools that
accept them (`"hostOwned"` in a server entry)."""

from __future__ import annotations

from ..consent import Decision, Ruling
from .events import CallRefused, EventBus
from .record import Call, Next, Outcome, denied


class HostOwned:
    def __init__(self, bus: EventBus, owner: str = "host") -> None:
        self.bus = bus
        self.owner = owner

    async def __call__(self, call: Call, next: Next) -> Outcome:
        target = call.resolved
        owned = target.link.config.host_owned
        refused = sorted(set(owned) & set(call.arguments))
        if refused:
            call.ruling = Ruling(Decision.DENY, "host-owned")
            reason = f"the {call.caller} tried to set host-owned {refused}"
            self.bus.publish(CallRefused(call.pending(), reason))
            return denied(
                f"The {self.owner} refused this call: {', '.join(refused)} can only be set "
                f"by the {self.owner}."
            )
        accepts = (target.tool.input_schema.get("properties") or {}).keys()
        call.sent = dict(call.arguments)
        call.sent.update({k: v for k, v in owned.items() if v is not None and k in accepts})
        return await next(call)
