"""Plain str/int/float/bool signatures are validated by pydantic-core directly (no pydantic
import at start-up): the JSON Schema, the validated values and every error must be exactly what
the pydantic model path gives for the same signature."""

from __future__ import annotations

import math
import subprocess
import sys
from typing import Any

import pytest
from pydantic_core import ValidationError

from mcpkit.server.signature import Signature, model_signature, scalar_signature


def echo(text: str) -> str:
    return text


def filler(query: str, limit: int = 10, verbose: bool = False, ratio: float = 0.5) -> str:
    return query


def odd_names(_private: str, trailing_: int, snake_case_name: bool = True, x1: float = 2.0) -> None:
    return None


def nothing() -> None:
    return None


INPUTS: list[dict[str, Any]] = [
    {},
    {"text": "hi", "query": "q", "_private": "p", "trailing_": 3},
    {"text": 1, "query": 2, "_private": None, "trailing_": "7"},
    {"query": "q", "limit": "12", "verbose": "true", "ratio": "1e3"},
    {"query": "q", "limit": 12.5, "verbose": "maybe", "ratio": "nan"},
    {"query": "q", "limit": True, "verbose": 1, "ratio": 3},
    {"query": "q", "limit": 10**30, "verbose": 0, "ratio": float("inf")},
    {"text": "hi", "extra": 1, "snake_case_name": "no", "x1": "1.5"},
    {"trailing_": [1], "_private": {"a": 1}, "text": ["x"]},
]


def outcome(validate: Any, args: dict[str, Any]) -> Any:
    try:
        return ("ok", validate(dict(args)))
    except ValidationError as exc:
        return ("error", exc.errors(include_url=False))


@pytest.mark.parametrize("fn", [echo, filler, odd_names, nothing])
def test_same_schema_and_validation_as_the_pydantic_model(fn: Any) -> None:
    sig = Signature(fn, model_name="t")
    params = [(n, a, d) for n, a, d in _params(fn)]
    fast_validate, fast_schema = scalar_signature(params)
    model_validate, model_schema = model_signature("t_arguments", params, False)
    assert fast_schema == model_schema
    assert repr(fast_schema) == repr(model_schema)  # same key order: same tools/list bytes
    assert sig.schema == model_schema
    for args in INPUTS:
        got, want = outcome(fast_validate, args), outcome(model_validate, args)
        if got[0] == "ok" and want[0] == "ok":
            assert _same(got[1], want[1]), args
        else:
            assert got == want, args


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.keys() != b.keys():
        return False
    return all(
        (isinstance(x, float) and math.isnan(x) and isinstance(y, float) and math.isnan(y))
        or (x == y and type(x) is type(y))
        for x, y in zip(a.values(), b.values(), strict=True)
    )


def _params(fn: Any) -> list[tuple[str, Any, Any]]:
    import inspect
    from typing import get_type_hints

    hints = get_type_hints(fn)
    return [
        (n, hints[n], ... if p.default is inspect.Parameter.empty else p.default)
        for n, p in inspect.signature(fn).parameters.items()
    ]


def test_other_annotations_and_defaults_take_the_pydantic_path() -> None:
    def optional(x: int | None = None, y: list[str] | None = None) -> None: ...

    def int_default_for_float(x: float = 1) -> None: ...

    def kwargs(a: str, **rest: Any) -> None: ...

    for fn in (optional, int_default_for_float, kwargs):
        sig = Signature(fn, model_name="t")
        assert sig._validate.__name__ == "validate"  # the pydantic model's validator


def test_a_server_of_plain_tools_does_not_import_pydantic() -> None:
    code = (
        "import sys\n"
        "from mcpkit import Server\n"
        "s = Server('x')\n"
        "@s.tool()\n"
        "async def echo(text: str, times: int = 1) -> str:\n"
        "    return text\n"
        "import mcpkit.server.transports.stdio, mcpkit.server.transports.http\n"
        "print('pydantic' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
