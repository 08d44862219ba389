"""Pins: a tool whose definition changed since it was pinned, and a new one (a tool added or
renamed on a pinned server, or the catalogue of a server seen for the first time), is withheld
until the user approves it (`host.pins`, `host.quarantine`). The link's review decides what
is withheld; this policy makes sure no front end calls such a tool anyway (a stale catalogue,
a call typed by hand)."""

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
    for change in link.withheld:
        if change.tool == tool.name:
            call.ruling = Ruling(Decision.DENY, "pins")
            return denied(
                f"The tool {tool.name!r} of the {link.name!r} server {change.why} and is "
                f"withheld until approved (review: mcpkit pins diff {link.name}; approve: "
                f"mcpkit pins approve {link.name} {tool.name})."
            )
    return None
