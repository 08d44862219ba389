"""`on_call`: the application's say in each allowed call (`host.hooks`): `_meta`, headers and
host-owned argument values, checked before anything reaches the server."""

from __future__ import annotations

from ..events import CallRefused, EventBus
from ..hooks import CallInfo, HookRefused, OnCall, run_hook
from .record import Call, Next, Outcome, denied


class Hook:
    def __init__(self, hook: OnCall, bus: EventBus) -> None:
        self.hook = hook
        self.bus = bus

    async def __call__(self, call: Call, next: Next) -> Outcome:
        link, tool = call.resolved.link, call.resolved.tool
        info = CallInfo(link.name, tool.name, call.alias, call.arguments)
        try:
            call.extras = await run_hook(self.hook, info, link.config.host_owned)
        except HookRefused as exc:
            self.bus.publish(CallRefused(call.pending(), str(exc)))
            return denied(f"The host refused this call: {exc}")
        call.sent = {**call.outgoing(), **call.extras.arguments}
        return await next(call)
