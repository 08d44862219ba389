"""Capped exponential backoff: how long to wait before the next attempt (restarts, retries).

    Backoff(initial=0.5, factor=2, cap=30).delay(attempt)   # 0.5, 1, 2, 4, ... 30, 30

`jitter` spreads the delays of many clients that failed together (a fraction of the delay,
taken off at random); tests use `jitter=0` for exact figures.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Backoff:
    initial: float = 0.5
    factor: float = 2.0
    cap: float = 30.0
    jitter: float = 0.2

    def __post_init__(self) -> None:
        if not (self.initial >= 0 and self.factor >= 1 and self.cap >= self.initial):
            raise ValueError("backoff needs initial ≥ 0, factor ≥ 1 and max ≥ initial")
        if not 0 <= self.jitter <= 1:
            raise ValueError("backoff jitter is a fraction between 0 and 1")

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number `attempt` (0 for the first retry)."""
        base = min(self.cap, self.initial * self.factor ** min(attempt, 64))
        if not self.jitter:
            return base
        return base * (1 - self.jitter * (rng or random).random())

    @classmethod
    def parse(cls, value: Any, default: Backoff) -> Backoff:
        """`{"initial": 0.5, "max": 30, "factor": 2, "jitter": 0.2}`, each key optional."""
        if value is None:
            return default
        if not isinstance(value, Mapping):
            raise ValueError('backoff must be an object like {"initial": 0.5, "max": 30}')
        unknown = set(value) - {"initial", "max", "factor", "jitter"}
        if unknown:
            raise ValueError(
                f"unknown backoff keys {sorted(unknown)} (initial, max, factor, jitter)"
            )
        try:
            return cls(
                float(value.get("initial", default.initial)),
                float(value.get("factor", default.factor)),
                float(value.get("max", default.cap)),
                float(value.get("jitter", default.jitter)),
            )
        except (TypeError, ValueError) as exc:
            raise ValueError(f"backoff: {exc}") from None
