"""The contract every call policy shares: the call record, its outcome, and the chain.

A policy is an object with `async def __call__(self, call, next) -> Outcome`: it sees the
typed `Call` record, may fill in what it owns (the target, the arguments sent, the idempotency
key, the deadline, the ruling...), and either calls on (`await next(call)`) or answers itself
(a denial, a refusal). `chain(policies, last)` stacks them once, outermost first, like ASGI
middleware; the assembled chain is a plain `Next`.

State that lives across attempts (the attempt number, whether an attempt may have reached the
server) is a field of the record, never a closure's variable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...client import CallResult
from ..connections import Target
from ..consent import PendingCall, Ruling
from ..deadlines import Clock, Deadline
from ..hooks import CallExtras
from ..results import Fitted


@dataclass(slots=True)
class Call:
    """One tool call on its way through the chain.

    `alias`: the name the caller used; `arguments`: as the caller gave them (audited, shown,
    judged); `sent`: what goes to the server when a policy changed it (host-owned values filled
    in, the hook's added; `outgoing()` reads it).
    `caller`: who asked (`model`, `app:NAME`, `inspector`), `agent` the agent's name for the
    audit trail, `principal` an authenticated caller's, `app` the id of the MCP App instance
    that asked (consent's answer for that app stands in for asking about each call). `attempt` counts the attempts made,
    `give_up` is the loop time after which a retry stops waiting for the link to be back, and
    `unsure` says an attempt failed after it may have reached the server."""

    alias: str
    call_id: str
    arguments: dict[str, Any]
    caller: str = "model"
    agent: str | None = None
    principal: str | None = None
    app: str | None = None
    target: Target | None = None
    sent: dict[str, Any] | None = None
    extras: CallExtras = field(default_factory=CallExtras)
    ruling: Ruling | None = None
    key: str | None = None
    deadline: Deadline | None = None
    clock: Clock | None = None
    #: The front end's own handle on the call (the gateway's request context), for its parts
    #: of the chain (how it asks the user, what it sends); the policies never read it.
    context: Any = None
    attempt: int = 0
    give_up: float = 0.0
    unsure: bool = False
    #: The front end's hook told the id of the task the server runs the call as (`Send`).
    on_task: Callable[[str], None] | None = None

    @property
    def resolved(self) -> Target:
        """The target (name resolution runs first: a policy after it may rely on this)."""
        if self.target is None:
            raise LookupError(f"the call {self.call_id} reached a policy before name resolution")
        return self.target

    def outgoing(self) -> dict[str, Any]:
        """The arguments the server gets: `sent` once a policy settled them."""
        return self.arguments if self.sent is None else self.sent

    def pending(self) -> PendingCall:
        """The call as the user is shown it (annotations only from a trusted server)."""
        link, tool = self.resolved.link, self.resolved.tool
        trusted = link.config.trusted
        return PendingCall(
            self.alias,
            link.name,
            tool.name,
            self.arguments,
            tool.annotations if trusted else {},
            trusted,
            self.call_id,
        )


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a call ended. `raw` when the server answered; otherwise `error`, the line for the
    caller. `kind` is `ok`, `tool-error`, `error`, `timeout`, `unknown` or `denied` (as the
    audit trail records it); `key` the idempotency key, `attempts` how often it was sent;
    `fitted` the result cut to the output budget (where that policy runs)."""

    kind: str
    raw: CallResult | None = None
    error: str | None = None
    key: str | None = None
    attempts: int = 0
    fitted: Fitted | None = None


def denied(error: str) -> Outcome:
    return Outcome("denied", error=error)


def failed(error: str) -> Outcome:
    return Outcome("error", error=error)


class Refused(Exception):
    """A front end's part of a policy cannot make this call (a value it cannot fill in, a user
    it cannot ask); the message is the caller's line."""


Next = Callable[[Call], Awaitable[Outcome]]


class Policy(Protocol):
    async def __call__(self, call: Call, next: Next) -> Outcome: ...


def chain(policies: Sequence[Policy], last: Next) -> Next:
    """`policies` wrapped around `last`, the first outermost; built once, not per call."""
    call = last
    for policy in reversed(policies):
        call = _link(policy, call)
    return call


def _link(policy: Policy, after: Next) -> Next:
    async def step(call: Call) -> Outcome:
        return await policy(call, after)

    return step
