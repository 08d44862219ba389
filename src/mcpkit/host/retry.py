"""Safe retries of tool calls: which failed calls the host may repeat, and how.

Every tool call the model asks for gets one idempotency key, made before the first attempt and
sent with every retry of that call (so a server that knows the key answers a repeat with the
first answer). A failed attempt is repeated, a capped number of times with backoff, only when
repeating it is certainly harmless:

- the request certainly never reached the server (`Failure.NOT_DELIVERED`: `ConnectFailed`);
- the server advertises the idempotency extension
  (`mcpkit.protocol.idempotency.IDEMPOTENCY_EXTENSION`, `Client.supports_idempotency`): it
  recognises the key;
- a **trusted** server annotates the tool `idempotentHint` or `readOnlyHint` (TOOL-12).

Anything else whose outcome is unknown (the connection dropped mid-call, no answer in time) is
not repeated: the model gets an "outcome unknown" error naming the key. A call past its
deadline is never repeated (the deadline was its budget); a call the server answered, even
with an error, is never repeated either.

This module is the policy and a runner, with no I/O of its own: `call_with_retries(attempt,
...)` calls `attempt(key)` and decides after each failure; the call pipeline's `Retry`
(`host/pipeline/retry.py`) runs each attempt down to `client.call_tool(..., idempotency_key=key)`.
"""

from __future__ import annotations

import asyncio
import enum
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..client.errors import (
    AuthorizationError,
    ConnectFailed,
    ConnectionClosed,
    InvalidResponse,
    TaskCancelled,
    TransportError,
)
from ..protocol.errors import MCPError
from .backoff import Backoff
from .deadlines import DeadlineExceeded

T = TypeVar("T")

#: Errors meaning the request certainly never left the host (the connection could not be made).
NOT_DELIVERED_ERRORS: tuple[type[BaseException], ...] = (ConnectFailed,)


class Failure(enum.Enum):
    NOT_DELIVERED = "not delivered"  # certainly never reached the server
    UNKNOWN = "unknown"  # may have run: the connection dropped mid-call
    TIMED_OUT = "timed out"  # may have run, and the call's deadline is spent
    ANSWERED = "answered"  # the server answered (with an error): repeating changes nothing


class Verdict(enum.Enum):
    RETRY = "retry"
    FAIL = "fail"  # give the failure to the model as it is
    UNKNOWN = "unknown"  # give the model an "outcome unknown" error naming the key


def classify(
    exc: BaseException, not_delivered: tuple[type[BaseException], ...] = NOT_DELIVERED_ERRORS
) -> Failure:
    if isinstance(exc, MCPError | AuthorizationError | TaskCancelled):
        return Failure.ANSWERED  # an error, a refusal, a task ended: the server had its say
    if not_delivered and isinstance(exc, not_delivered):
        return Failure.NOT_DELIVERED
    if isinstance(exc, DeadlineExceeded):
        return Failure.TIMED_OUT
    status = exc.status if isinstance(exc, TransportError) else None
    if status is not None and status < 500:
        return Failure.ANSWERED  # refused at the HTTP layer (4xx): the tool did not run
    return Failure.UNKNOWN  # the connection broke, a 5xx, an answer that is not MCP


def new_key() -> str:
    """A fresh idempotency key: one per model tool call, reused by its retries."""
    return f"mcpkit-{uuid.uuid4().hex}"


@dataclass(frozen=True, slots=True)
class CallSafety:
    """What makes repeating one call harmless."""

    idempotent_server: bool = False  # the server advertises IDEMPOTENCY_EXTENSION
    trusted: bool = False
    annotations: Mapping[str, Any] = field(default_factory=dict)

    @property
    def repeatable(self) -> bool:
        if self.idempotent_server:
            return True
        hints = self.annotations if self.trusted else {}
        return hints.get("idempotentHint") is True or hints.get("readOnlyHint") is True


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often a call is tried (`attempts`, the first included; 1: never repeated) and the
    wait before each retry. From config: `"host": {"retry": {"attempts": 3, "initial": 0.2,
    "max": 2}}` (`factor` and `jitter` as for `restart`)."""

    attempts: int = 3
    backoff: Backoff = field(default_factory=lambda: Backoff(initial=0.2, factor=2, cap=2))

    def __post_init__(self) -> None:
        if type(self.attempts) is not int or self.attempts < 1:
            raise ValueError('"attempts" must be a whole number ≥ 1 (1: never repeat a call)')

    @classmethod
    def parse(cls, value: Any) -> RetryPolicy:
        """The `retry` object of the host settings (ValueError says what is wrong)."""
        default = cls()
        if value is None:
            return default
        if not isinstance(value, Mapping):
            raise ValueError('it must be an object like {"attempts": 3, "initial": 0.2, "max": 2}')
        unknown = set(value) - {"attempts", "initial", "max", "factor", "jitter"}
        if unknown:
            raise ValueError(
                f"unknown keys {sorted(unknown)} (attempts, initial, max, factor, jitter)"
            )
        timing = {k: v for k, v in value.items() if k != "attempts"}
        return cls(value.get("attempts", default.attempts), Backoff.parse(timing, default.backoff))

    def decide(self, failure: Failure, attempt: int, safety: CallSafety) -> Verdict:
        """After attempt number `attempt` (0 for the first) failed with `failure`."""
        if failure is Failure.ANSWERED:
            return Verdict.FAIL
        unknown = Verdict.FAIL if safety.repeatable else Verdict.UNKNOWN
        if failure is Failure.TIMED_OUT:
            return unknown
        if attempt + 1 >= self.attempts:
            return Verdict.FAIL if failure is Failure.NOT_DELIVERED else unknown
        if failure is Failure.NOT_DELIVERED or safety.repeatable:
            return Verdict.RETRY
        return Verdict.UNKNOWN


class OutcomeUnknown(Exception):
    """A call failed after it may have reached the server, and repeating it is not known to be
    harmless; `key` is the idempotency key it was sent with, `cause` the failure."""

    def __init__(self, tool: str, key: str, cause: BaseException) -> None:
        super().__init__(
            f"The outcome of the call to {tool} is unknown: {_reason(cause)}. It may or may not "
            f"have taken effect, so the host did not repeat it. Its idempotency key is {key}; "
            "check whether it took effect before calling it again."
        )
        self.tool = tool
        self.key = key
        self.cause = cause


def _reason(exc: BaseException) -> str:
    if isinstance(exc, DeadlineExceeded):
        return f"{exc}, and it was cancelled"
    if isinstance(exc, InvalidResponse):
        return "the server's answer was not valid MCP"
    if isinstance(exc, TransportError) and exc.status is not None:
        return f"the server answered HTTP {exc.status}"
    if isinstance(exc, ConnectionClosed):
        return "the connection failed before its answer arrived"
    return "no answer arrived"


async def call_with_retries(
    attempt: Callable[[str], Awaitable[T]],
    *,
    tool: str,
    safety: CallSafety,
    policy: RetryPolicy | None = None,
    key: str | None = None,
    classify_failure: Callable[[BaseException], Failure] = classify,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> T:
    """`await attempt(key)` until it succeeds or the policy says stop; every attempt gets the
    same key. Raises the last failure, or `OutcomeUnknown` naming the key."""
    policy = policy or RetryPolicy()
    key = key or new_key()
    number = 0
    while True:
        try:
            return await attempt(key)
        except Exception as exc:
            verdict = policy.decide(classify_failure(exc), number, safety)
            if verdict is Verdict.UNKNOWN:
                raise OutcomeUnknown(tool, key, exc) from exc
            if verdict is Verdict.FAIL:
                raise
        await sleep(policy.backoff.delay(number))
        number += 1
