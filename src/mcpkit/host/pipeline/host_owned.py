"""Host-owned arguments: identity and the like come from configuration and credentials, never
from the caller. A call that sets one is refused; the others are filled in for the tools that
accept them (`"hostOwned"` in a server entry)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..consent import Decision, Ruling
from ..events import CallRefused, EventBus
from .record import Call, Next, Outcome, Refused, denied

Values = Callable[[Call], Mapping[str, Any]]


class HostOwned:
    """`owner`: who the refusal names (the host, the gateway). `values(call)`: the host-owned
    values the call's tool gets (default: those configured, for the arguments its schema has);
    it may raise `Refused` (a value made from the caller's token it does not have)."""

    def __init__(self, bus: EventBus, owner: str = "host", values: Values | None = None) -> None:
        self.bus = bus
        self.owner = owner
        self.values = values or configured

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
        try:
            values = self.values(call)
        except Refused as exc:
            return denied(str(exc))
        call.sent = {**call.arguments, **values} if values else call.arguments
        return await next(call)


def configured(call: Call) -> dict[str, Any]:
    """The configured host-owned values of the arguments the tool's schema has."""
    target = call.resolved
    accepts = (target.tool.input_schema.get("properties") or {}).keys()
    owned = target.link.config.host_owned
    return {k: v for k, v in owned.items() if v is not None and k in accepts}
