"""Retry with the idempotency key: one key per call, made before the first attempt and sent
with every attempt; a failed attempt is repeated only when that is certainly harmless, as
`host.retry` decides (the link's `RetryPolicy`). Without this policy a call is sent once,
with no key of the host's."""

from __future__ import annotations

from ..retry import CallSafety, Failure, RetryPolicy, call_with_retries, classify, new_key
from .record import Call, Next, Outcome


class Retry:
    """`policy`: how often and when (default: the link's, from the host's `retry`); `rounds`:
    exceptions that end a round of the call, not an attempt (never retried)."""

    def __init__(
        self, policy: RetryPolicy | None = None, rounds: tuple[type[BaseException], ...] = ()
    ) -> None:
        self.policy = policy
        self.rounds = rounds

    def _failure(self, exc: BaseException) -> Failure:
        return Failure.ANSWERED if isinstance(exc, self.rounds) else classify(exc)

    async def __call__(self, call: Call, next: Next) -> Outcome:
        link, tool = call.resolved.link, call.resolved.tool
        client = link.client
        # Annotations count only from a trusted server (TOOL-12).
        idempotent = client is not None and client.supports_idempotency
        safety = CallSafety(idempotent, link.config.trusted, tool.annotations)
        call.key = call.key or new_key()

        async def attempt(key: str) -> Outcome:
            return await next(call)

        where = f"{link.name} > {tool.name}"
        return await call_with_retries(
            attempt,
            tool=where,
            safety=safety,
            policy=self.policy or link.retry,
            key=call.key,
            classify_failure=self._failure,
        )
