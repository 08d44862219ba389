"""The host's retry policy: only what is certainly harmless is repeated, with one key per call."""

from __future__ import annotations

import pytest

from host_support import example_config
from mcpkit.client.errors import (
    AuthorizationError,
    ConnectFailed,
    ConnectionClosed,
    InvalidResponse,
    StreamBroken,
    TransportError,
)
from mcpkit.host import ConfigError, HostSettings, parse_config
from mcpkit.host.backoff import Backoff
from mcpkit.host.deadlines import Deadline, DeadlineExceeded
from mcpkit.host.retry import (
    CallSafety,
    Failure,
    OutcomeUnknown,
    RetryPolicy,
    Verdict,
    call_with_retries,
    classify,
    new_key,
)
from mcpkit.protocol.errors import MCPError


class NotSent(TransportError):
    """Stands for the client's "connection could not be made" error."""


def failure(exc: BaseException) -> Failure:
    return classify(exc, (NotSent,))


PLAIN = CallSafety()
IDEMPOTENT_SERVER = CallSafety(idempotent_server=True)
TRUSTED_READ = CallSafety(trusted=True, annotations={"readOnlyHint": True})
TRUSTED_IDEMPOTENT = CallSafety(trusted=True, annotations={"idempotentHint": True})
UNTRUSTED_READ = CallSafety(trusted=False, annotations={"readOnlyHint": True})


def test_failures_are_classified() -> None:
    assert failure(MCPError("nope", code=-32602)) is Failure.ANSWERED
    assert failure(NotSent("refused")) is Failure.NOT_DELIVERED
    assert failure(ConnectionClosed("gone")) is Failure.UNKNOWN
    assert failure(DeadlineExceeded(Deadline(1))) is Failure.TIMED_OUT
    assert classify(NotSent("refused")) is Failure.UNKNOWN  # unknown types are never "safe"


def test_the_clients_errors_are_classified_by_how_far_the_request_got() -> None:
    assert classify(ConnectFailed("connection refused")) is Failure.NOT_DELIVERED
    assert classify(ConnectionClosed("closed before any answer")) is Failure.UNKNOWN
    assert classify(StreamBroken("the stream ended")) is Failure.UNKNOWN
    assert classify(InvalidResponse("not JSON")) is Failure.UNKNOWN  # it may have run
    assert classify(TransportError("bad gateway", status=502)) is Failure.UNKNOWN
    assert classify(TransportError("forbidden", status=403)) is Failure.ANSWERED
    assert classify(AuthorizationError("no token", status=401)) is Failure.ANSWERED


@pytest.mark.parametrize(
    ("kind", "safety", "verdict"),
    [
        (Failure.NOT_DELIVERED, PLAIN, Verdict.RETRY),
        (Failure.UNKNOWN, PLAIN, Verdict.UNKNOWN),
        (Failure.UNKNOWN, IDEMPOTENT_SERVER, Verdict.RETRY),
        (Failure.UNKNOWN, TRUSTED_READ, Verdict.RETRY),
        (Failure.UNKNOWN, TRUSTED_IDEMPOTENT, Verdict.RETRY),
        (Failure.UNKNOWN, UNTRUSTED_READ, Verdict.UNKNOWN),  # TOOL-12: hints need trust
        (Failure.TIMED_OUT, PLAIN, Verdict.UNKNOWN),
        (Failure.TIMED_OUT, IDEMPOTENT_SERVER, Verdict.FAIL),  # the deadline was its budget
        (Failure.ANSWERED, IDEMPOTENT_SERVER, Verdict.FAIL),
    ],
)
def test_what_may_be_repeated(kind: Failure, safety: CallSafety, verdict: Verdict) -> None:
    assert RetryPolicy().decide(kind, 0, safety) is verdict


def test_attempts_are_capped() -> None:
    policy = RetryPolicy(attempts=3)
    assert policy.decide(Failure.NOT_DELIVERED, 1, PLAIN) is Verdict.RETRY
    assert policy.decide(Failure.NOT_DELIVERED, 2, PLAIN) is Verdict.FAIL
    assert policy.decide(Failure.UNKNOWN, 2, TRUSTED_READ) is Verdict.FAIL


class Attempts:
    """Fails with the given errors in turn, then answers; records the keys it was sent."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.keys: list[str] = []

    async def __call__(self, key: str) -> str:
        self.keys.append(key)
        if self.errors:
            raise self.errors.pop(0)
        return "the first answer"


async def run(attempts: Attempts, safety: CallSafety, **kw: object) -> tuple[str, list[float]]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    policy = RetryPolicy(attempts=4, backoff=Backoff(initial=0.1, factor=2, cap=0.3, jitter=0))
    answer = await call_with_retries(
        attempts,
        tool="returns > create_return",
        safety=safety,
        policy=policy,
        classify_failure=failure,
        sleep=sleep,
        **kw,  # type: ignore[arg-type]
    )
    return answer, slept


async def test_retries_keep_one_key_and_back_off() -> None:
    attempts = Attempts(NotSent("refused"), ConnectionClosed("dropped"), ConnectionClosed("x"))
    answer, slept = await run(attempts, IDEMPOTENT_SERVER, key="k-1")
    assert answer == "the first answer" and attempts.keys == ["k-1"] * 4
    assert slept == [0.1, 0.2, 0.3]  # capped


async def test_an_unsafe_drop_is_outcome_unknown_and_not_retried() -> None:
    attempts = Attempts(ConnectionClosed("dropped after the server ran it"))
    with pytest.raises(OutcomeUnknown) as info:
        await run(attempts, PLAIN, key="k-2")
    assert len(attempts.keys) == 1 and info.value.key == "k-2"
    assert "k-2" in str(info.value) and "may or may not have taken effect" in str(info.value)
    assert "create_return" in str(info.value)


async def test_server_errors_and_exhausted_retries_raise_the_failure() -> None:
    with pytest.raises(MCPError):
        await run(Attempts(MCPError("bad arguments", code=-32602)), IDEMPOTENT_SERVER)
    with pytest.raises(NotSent):
        await run(Attempts(*[NotSent("refused")] * 4), PLAIN)
    with pytest.raises(OutcomeUnknown, match="no answer within its deadline"):
        await run(Attempts(DeadlineExceeded(Deadline(30))), PLAIN)


def test_keys_are_fresh_per_call() -> None:
    assert new_key() != new_key() and new_key().startswith("mcpkit-")


def test_the_policy_comes_from_the_host_settings() -> None:
    def settings(retry: object) -> HostSettings:
        return HostSettings.from_config(parse_config({"mcpServers": {}, "host": {"retry": retry}}))

    assert HostSettings().retry == RetryPolicy()
    assert HostSettings.from_config(example_config({})).retry == RetryPolicy()  # the docs'
    policy = settings({"attempts": 5, "initial": 0.1, "max": 1, "jitter": 0}).retry
    assert policy == RetryPolicy(5, Backoff(initial=0.1, factor=2, cap=1, jitter=0))
    assert settings({"attempts": 1}).retry.decide(Failure.NOT_DELIVERED, 0, PLAIN) is Verdict.FAIL
    for bad, message in [
        ({"attempts": 0}, "whole number"),
        ({"attempts": True}, "whole number"),
        ({"attemps": 2}, "unknown keys"),
        ({"max": -1}, "backoff"),
        (3, "an object"),
    ]:
        with pytest.raises(ConfigError, match=f'"retry": .*{message}'):
            settings(bad)
