"""The deadline of each attempt, per server and tool from config (`host.deadlines`): progress
may restart it, time spent waiting for the user does not count, and a call past it is
cancelled (CANC-04/05/06, CANC-08)."""

from __future__ import annotations

from ..deadlines import Clock, within
from .record import Call, Next, Outcome


class Deadline:
    async def __call__(self, call: Call, next: Next) -> Outcome:
        call.deadline = call.resolved.link.config.deadline(call.resolved.tool.name)

        async def timed(clock: Clock) -> Outcome:
            call.clock = clock
            try:
                return await next(call)
            finally:
                call.clock = None

        return await within(call.deadline, timed)
