"""Pins: a tool whose definition changed since it was pinned is withheld until the user
approves it (`host.pins`). The link's review decides what is withheld; this policy makes sure
no front end calls such a tool anyway (a stale catalogue, a call typed by hand).

Quarantine of a server (a tool whose pin changed blocks its whole server) belongs here too,
as a second check on `call.resolved.link` before calling on."""

from __future__ import annotations

from ..consent import Decision, Ruling
from .record import Call, Next, Outcome, denied


class Pins:
    async def __call__(self, call: Call, next: Next) -> Outcome:
        return withheld(call) or await next(call)


def withheld(call: Call) -> Outcome | None:
    """The denial of a call to a withheld tool (also checked once a lazy server has started
    and listed its tools afresh), or None."""
    link, tool = call.resolved.link, call.resolved.tool
    if any(change.tool == tool.name for change in link.withheld):
        call.ruling = Ruling(Decision.DENY, "pins")
        return denied(
            f"The tool {tool.name!r} of the {link.name!r} server changed since it was "
            f"pinned and is withheld until approved (mcpkit pins diff {link.name})."
        )
    return None
