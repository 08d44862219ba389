"""Property-based fuzzing of every transport and era (hypothesis; schema-driven from
tests/data, then mutated; random headers on HTTP). The oracle is `fuzzing.Target.check`: no
exit, no HTTP 500, no traceback but a tool's own failure, every request answered within the
deadline (listen: acknowledged), a canary answered after every batch.

`make test` runs a small fixed budget; CI sets MCPKIT_FUZZ_EXAMPLES for a larger one.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from fuzz_targets import HttpTarget, StdioTarget
from fuzzing import LEGACY, MODERN, OracleFailure, Target, batches, budget

SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
#: Examples per target in `make test` (a few seconds in all); CI: MCPKIT_FUZZ_EXAMPLES.
SMALL = 40


def fuzz(target: Target, revision: str, http: bool, examples: int, **options: object) -> None:
    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=SLOW,
        **options,  # type: ignore[arg-type]
    )
    @given(batch=batches(revision, http))
    def property_holds(batch: list[tuple[bytes, dict[str, str]]]) -> None:
        target.check(batch)

    property_holds()


TARGETS = {
    "stdio-modern": (lambda: StdioTarget(MODERN), MODERN, False),
    "stdio-legacy": (lambda: StdioTarget(LEGACY), LEGACY, False),
    "http-modern": (lambda: HttpTarget(MODERN), MODERN, True),
    "http-legacy": (lambda: HttpTarget(LEGACY), LEGACY, True),
}


@pytest.mark.parametrize("name", list(TARGETS))
def test_fuzz(name: str) -> None:
    make, revision, http = TARGETS[name]
    target = make()
    try:
        fuzz(target, revision, http, budget(SMALL))
        assert target.restarts == 0
    finally:
        target.stop()


def test_the_fuzzer_finds_a_planted_crash() -> None:
    # fuzz_server.py --plant uses a notification before checking its shape (the bug class
    # the front door removed); the make-test budget must be enough to find it.
    target = StdioTarget(MODERN, plant=True)
    try:
        with pytest.raises(OracleFailure, match="exited"):
            fuzz(target, MODERN, False, SMALL, phases=[Phase.generate])
    finally:
        target.stop()
