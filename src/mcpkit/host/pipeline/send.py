"""The end of the chain: `tools/call` on the server's client, with the arguments, idempotency
key, `_meta` and headers the policies settled on. Raises what the client raises."""

from __future__ import annotations

import contextlib

from ...client.session import sent_ids
from ...client.tasks import task_started
from ..consent import PendingCall
from ..events import CallProgress, CallSent, EventBus
from .attempt import NotBack
from .record import Call, Outcome


class Send:
    def __init__(self, bus: EventBus) -> None:
        self.bus = bus

    async def __call__(self, call: Call) -> Outcome:
        link, tool = call.resolved.link, call.resolved.tool
        client = link.client
        if client is None:
            raise NotBack(f"the {link.name!r} server is not connected")
        clock, pending = call.clock, call.pending()

        def on_progress(done: float, total: float | None, message: str | None) -> None:
            if clock is not None:
                clock.progressed()
            self.bus.publish(CallProgress(pending, done, total, message))

        # The host's deadline bounds the call (the client's own timeout would cut it short);
        # the link pauses it while the server's questions wait for the user.
        timing = link.timing(clock) if clock is not None else contextlib.nullcontext()
        told = sent_ids.set(_FirstSent(self.bus, pending))
        tasked = task_started.set(call.on_task)
        try:
            with timing:
                raw = await client.call_tool(
                    tool.name,
                    call.outgoing(),
                    timeout=None,
                    progress=on_progress,
                    idempotency_key=call.key,
                    meta=call.extras.meta or None,
                    headers=call.extras.headers or None,
                )
        finally:
            task_started.reset(tasked)
            sent_ids.reset(told)
        return Outcome("tool-error" if raw.is_error else "ok", raw, None, call.key, call.attempt)


class _FirstSent:
    """Publishes the id of a call's first `tools/call` request (not an MRTR round's)."""

    __slots__ = ("bus", "call", "told")

    def __init__(self, bus: EventBus, call: PendingCall) -> None:
        self.bus, self.call, self.told = bus, call, False

    def __call__(self, method: str, request_id: int) -> None:
        if method == "tools/call" and not self.told:
            self.told = True
            self.bus.publish(CallSent(self.call, request_id))
