"""The output budget: the result cut to what the model may see (`host.results`); the rest is
kept host-side for `read_result`."""

from __future__ import annotations

from dataclasses import replace

from ..content import result_blocks
from ..results import ResultStore, fit
from .record import Call, Next, Outcome


class Budget:
    """`store`: where the rest is kept (None: left out, for a front with no `read_result`)."""

    def __init__(self, tokens: int, store: ResultStore | None) -> None:
        self.tokens = tokens
        self.store = store

    async def __call__(self, call: Call, next: Next) -> Outcome:
        outcome = await next(call)
        if outcome.raw is None:
            return outcome
        fitted = fit(result_blocks(outcome.raw.raw), self.tokens, self.store)
        return replace(outcome, fitted=fitted)
