"""Name resolution: the caller's tool name to a server's tool, before anything else runs."""

from __future__ import annotations

from collections.abc import Callable

from ..connections import Target
from .record import Call, Next, Outcome, failed


class Resolve:
    """`lookup(alias)`: the target the name stands for, or None (unknown, not offered now).
        A call that arrives with its target (an app's, the inspector's) keeps it. The model's
        arguments are adapted back to the server's schema; a server that is restarting says when
        to try again, before anyone is asked for consent. An idle server (started on first use) is
    started by `Attempt`, once the call is allowed."""

    def __init__(self, lookup: Callable[[str], Target | None]) -> None:
        self.lookup = lookup

    async def __call__(self, call: Call, next: Next) -> Outcome:
        if call.target is None:
            target = self.lookup(call.alias)
            if target is None:
                return failed(f"There is no tool named {call.alias!r}.")
            call.target = target
            call.arguments = target.schema.to_server(call.arguments)
        if not call.target.link.up and not call.target.link.idle:
            return failed(call.target.link.unavailable())
        return await next(call)
