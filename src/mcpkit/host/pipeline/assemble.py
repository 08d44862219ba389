"""The chain each front end runs, assembled from its choice of policies.

    agent      Telemetry, Resolve, Audit, Present, HostOwned, Pins, Consent, [Hook],
               Budget, Screen, Failures, Retry, Attempt, Deadline → Send
    inspector  Audit, HostOwned, Pins, Failures, Attempt, Deadline → Send
               (the user typed the call: no consent question, no retry, no output budget;
               the result is shown as the server sent it, hidden characters included)
    gateway    Audit, HostOwned, Pins, Consent, [Budget], Screen, [Retry], Attempt, Deadline → the
               front's forwarding (retry off unless configured: the calling client retries;
               the output budget when configured; each backend's `timeout`/`timeouts`)

Outermost first. A front end adds only what is its own around `Pipeline(...)`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..audit import AuditLog
from ..connections import Target
from ..events import EventBus
from ..hooks import OnCall
from ..retry import RetryPolicy
from .attempt import Attempt
from .audit import Audit
from .budget import Budget
from .consent import Consent
from .deadline import Deadline
from .failures import Failures
from .hook import Hook
from .host_owned import HostOwned, Values
from .pins import Pins
from .present import Present
from .record import Call, Next, Outcome, Policy, chain
from .resolve import Resolve
from .retry import Retry
from .screen import Screen
from .send import Send
from .telemetry import Spans, Telemetry

P = TypeVar("P")


class Pipeline:
    """A front end's chain: `await pipeline(call)`; `bus` carries its events."""

    def __init__(self, policies: Sequence[Policy], bus: EventBus, last: Next | None = None):
        self.policies = tuple(policies)
        self.bus = bus
        self._run = chain(self.policies, last or Send(bus))

    async def __call__(self, call: Call) -> Outcome:
        return await self._run(call)

    def find(self, kind: type[P]) -> P | None:
        """The policy of that class in this chain, if it runs one."""
        return next((p for p in self.policies if isinstance(p, kind)), None)


def sending(*, retry: bool = True, deadline: bool = True) -> list[Policy]:
    """The inner policies: failures worded, retries (with the idempotency key), the link told
    how each attempt went, each attempt under its deadline."""
    policies: list[Policy] = [Failures()]
    if retry:
        policies.append(Retry())
    policies.append(Attempt())
    if deadline:
        policies.append(Deadline())
    return policies


def for_agent(
    *,
    lookup: Callable[[str], Target | None],
    consent: Consent,
    bus: EventBus,
    spans: Spans,
    audit: AuditLog | None,
    budget: Budget,
    seen: Callable[[str, list[dict[str, Any]]], None] | None = None,
    on_call: OnCall | None = None,
) -> Pipeline:
    policies: list[Policy] = [
        Telemetry(spans),
        Resolve(lookup),
        Audit(audit, bus),
        Present(bus, seen),
        HostOwned(bus),
        Pins(),
        consent,
    ]
    if on_call is not None:
        policies.append(Hook(on_call, bus))
    policies += [budget, Screen(bus), *sending()]
    return Pipeline(policies, bus)


def for_inspector(*, bus: EventBus, audit: AuditLog | None) -> Pipeline:
    """Calls typed by hand in the web UI's inspector: recorded as the user's own (the caller
    sets the ruling), host-owned values as the agent's calls get them (never typed), a
    withheld tool refused, each attempt under the server's deadline, never repeated."""
    policies: list[Policy] = [Audit(audit, bus), HostOwned(bus), Pins(), *sending(retry=False)]
    return Pipeline(policies, bus)


def for_gateway(
    *,
    bus: EventBus,
    audit: AuditLog | None,
    consent: Consent,
    values: Values,
    forward: Next,
    rounds: tuple[type[BaseException], ...] = (),
    retry: RetryPolicy | None = None,
    output_budget: int | None = None,
) -> Pipeline:
    """The gateway's calls from any MCP client: `values` fills host-owned arguments (from
    config or the caller's token), `forward` sends the call on to its backend and raises what
    went wrong (the gateway words it for its caller after the chain), `rounds` are the
    exceptions that end a round of input rather than the call (each round runs under its own
    deadline). `retry` (off by default: the calling client may retry itself) and
    `output_budget` (tokens) are the config's."""
    policies: list[Policy] = [
        Audit(audit, bus, rounds),
        HostOwned(bus, "gateway", values),
        Pins(),
        consent,
    ]
    if output_budget is not None:
        policies.append(Budget(output_budget, None))
    policies.append(Screen(bus))
    if retry is not None:
        policies.append(Retry(retry, rounds))
    policies += [Attempt(), Deadline()]
    return Pipeline(policies, bus, forward)
