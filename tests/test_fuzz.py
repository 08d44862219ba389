"""Property-based fuzzing of every transport and era (hypothesis; schema-driven from
tests/data, then mutated; random headers on HTTP). The oracle is `fuzzing.Target.check`: no
exit, no HTTP 500, no traceback but a tool's own failure, every request answered within the
deadline (listen: acknowledged), a canary answered after every batch.

`make test` runs a small fixed budget; CI sets MCPKIT_FUZZ_EXAMPLES for a larger one.
"""

from __future__ import annotations

from collections.abc import Iterator

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


@pytest.fixture
def stdio_modern() -> Iterator[Target]:
    target = StdioTarget(MODERN)
    yield target
    target.stop()


@pytest.fixture
def stdio_legacy() -> Iterator[Target]:
    target = StdioTarget(LEGACY)
    yield target
    target.stop()


@pytest.fixture
def http_modern() -> Iterator[Target]:
    target = HttpTarget(MODERN)
    yield target
    target.stop()


@pytest.fixture
def http_legacy() -> Iterator[Target]:
    target = HttpTarget(LEGACY)
    yield target
    target.stop()


def test_fuzz_stdio_modern(stdio_modern: Target) -> None:
    fuzz(stdio_modern, MODERN, False, budget(SMALL))
    assert stdio_modern.restarts == 0


def test_fuzz_stdio_legacy(stdio_legacy: Target) -> None:
    fuzz(stdio_legacy, LEGACY, False, budget(SMALL))
    assert stdio_legacy.restarts == 0


def test_fuzz_http_modern(http_modern: Target) -> None:
    fuzz(http_modern, MODERN, True, budget(SMALL))
    assert http_modern.restarts == 0


def test_fuzz_http_legacy(http_legacy: Target) -> None:
    fuzz(http_legacy, LEGACY, True, budget(SMALL))
    assert http_legacy.restarts == 0


def test_the_fuzzer_finds_a_planted_crash() -> None:
    # fuzz_server.py --plant uses a notification before checking its shape (the bug class
    # the front door removed); the make-test budget must be enough to find it.
    target = StdioTarget(MODERN, plant=True)
    try:
        with pytest.raises(OracleFailure, match="exited"):
            fuzz(target, MODERN, False, SMALL, phases=[Phase.generate])
    finally:
        target.stop()
