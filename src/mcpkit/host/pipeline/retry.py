"""Retry with the idempotency key: one key per call, made before the first attempt and sent
with every attempt; a failed attempt is repeated only when that is certainly harmless, as
`host.retry` decides (the link's `RetryPolicy`). Without this policy a call is sent once,
with no key of the host's."""

from __future__ import annotations

from ..retry import CallSafety, call_with_retries, new_key
from .record import Call, Next, Outcome


class Retry:
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
            attempt, tool=where, safety=safety, policy=link.retry, key=call.key
        )
