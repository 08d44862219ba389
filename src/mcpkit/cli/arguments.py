"""Parsing of the CLI's free-form arguments: the `--` command tail, TARGET, and KEY=VALUE pairs
coerced by the tool's input schema. No I/O."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

__all__ = [
    "coerce_arguments",
    "parse_json_object",
    "parse_key_values",
    "resolve_target",
    "split_command_tail",
    "split_pairs",
]

#: `127.0.0.1:8000/mcp`, `localhost:8000`, `example.com:443/mcp`: a URL without its scheme.
_HOST_PORT = re.compile(r"^(localhost|[\w.-]+\.[\w-]+|\[[0-9a-fA-F:]+\]):\d+(/\S*)?$")


def split_command_tail(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    """Split `argv` at the first `--`: (our arguments, the server command or None)."""
    args = list(argv)
    if "--" not in args:
        return args, None
    at = args.index("--")
    return args[:at], args[at + 1 :]


def resolve_target(target: str | None, tail: list[str] | None) -> str | list[str]:
    """TARGET (or the command after `--`) as the client takes it. Raises ValueError.

    A `.py` file (`server.py` or `server.py:OBJ`) is served by `python -m mcpkit run --quiet`
    with this interpreter; `127.0.0.1:8000/mcp` is refused with the URL it probably meant."""
    from ..client.target import is_url

    if tail is not None and target is not None:
        raise ValueError("give the server either as TARGET or after --, not both")
    if tail is not None:
        if not tail:
            raise ValueError("no command after --: give the server's command, or a URL")
        return _py_file(tail[0]) if len(tail) == 1 else tail
    if target is None or not target.strip():
        raise ValueError("missing TARGET: a server URL, a server.py file, or a command")
    text = target.strip()
    if is_url(text):
        return text
    if _HOST_PORT.match(text):
        raise ValueError(f"{text!r} looks like a URL without its scheme: use http://{text}")
    return _py_file(text)


def _py_file(text: str) -> str | list[str]:
    from .loader import split_spec

    if any(c.isspace() for c in text) or not split_spec(text)[0].endswith(".py"):
        return text
    return [sys.executable, "-m", "mcpkit", "run", text, "--quiet"]


def split_pairs(pairs: Sequence[str]) -> dict[str, str]:
    """`["a=1", "b=x=y"]` → `{"a": "1", "b": "x=y"}`. Raises ValueError for a pair without `=`."""
    raw: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"expected KEY=VALUE, got {pair!r}")
        raw[key] = value
    return raw


def parse_json_object(text: str) -> dict[str, Any]:
    """`--args '{"a": 1}'`: a JSON object, else ValueError."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ValueError(
            f"--args is not valid JSON ({exc}): pass an object like '{{\"a\": 1}}'"
        ) from None
    if not isinstance(value, dict):
        raise ValueError("--args must be a JSON object, like '{\"a\": 1}'")
    return value


def parse_key_values(
    pairs: Sequence[str], schema: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`["a=1", "b=x", 'c={"d": true}']` → `{"a": 1, "b": "x", "c": {"d": True}}`.

    Without a schema a value that parses as JSON is used as such, anything else is a string.
    With the tool's input schema each value becomes the type its property wants (`city=123` is
    the string "123" when `city` is a string). Raises ValueError for a pair without `=`."""
    return coerce_arguments(split_pairs(pairs), schema)


def coerce_arguments(
    raw: Mapping[str, str], schema: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    props = props if isinstance(props, Mapping) else {}
    return {key: _coerce(value, props.get(key)) for key, value in raw.items()}


_JSON_TYPES: dict[type, str] = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
    type(None): "null",
}


def _types(prop: Any) -> set[str]:
    """The JSON types a property schema allows (`type`, `anyOf`/`oneOf` members, `enum`)."""
    if not isinstance(prop, Mapping):
        return set()
    kind = prop.get("type")
    found = {kind} if isinstance(kind, str) else {k for k in kind or () if isinstance(k, str)}
    for key in ("anyOf", "oneOf"):
        for member in prop.get(key) or ():
            found |= _types(member)
    for value in prop.get("enum") or ():
        found.add(_JSON_TYPES.get(type(value), "string"))
    if "const" in prop:
        found.add(_JSON_TYPES.get(type(prop["const"]), "string"))
    return found


def _coerce(raw: str, prop: Any) -> Any:
    try:
        parsed: Any = orjson.loads(raw)
        parsed_ok = True
    except orjson.JSONDecodeError:
        parsed, parsed_ok = raw, False
    wanted = _types(prop)
    if not wanted:
        return parsed
    if parsed_ok:
        kind = _JSON_TYPES.get(type(parsed), "")
        if kind in wanted or (kind == "integer" and "number" in wanted):
            return parsed
    if "string" in wanted:
        return raw
    if "boolean" in wanted and raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    return parsed
