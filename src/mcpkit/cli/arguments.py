"""Parsing of the CLI's free-form arguments: the `--` command tail and KEY=VALUE pairs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

__all__ = ["parse_key_values", "split_command_tail"]


def split_command_tail(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    """Split `argv` at the first `--`: (our arguments, the server command or None)."""
    args = list(argv)
    if "--" not in args:
        return args, None
    at = args.index("--")
    return args[:at], args[at + 1 :]


def parse_key_values(pairs: Sequence[str]) -> dict[str, Any]:
    """`["a=1", "b=x", 'c={"d": true}']` → `{"a": 1, "b": "x", "c": {"d": True}}`.

    A value that parses as JSON is used as such, anything else is a string (quote it as
    JSON, e.g. `n='"42"'`, to force a string). Raises ValueError for a pair without `=`.
    """
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"expected KEY=VALUE, got {pair!r}")
        try:
            value: Any = orjson.loads(raw)
        except orjson.JSONDecodeError:
            value = raw
        arguments[key] = value
    return arguments
