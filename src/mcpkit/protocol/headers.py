"""HTTP header values mirrored from the JSON-RPC body (Streamable HTTP, 2026-07-28).

Pure helpers shared by the server transport and the client:

* the Base64 sentinel value encoding (`=?base64?...?=`, TR-ENC-*),
* header character validation (TR-HDR-14),
* discovery and validation of `x-mcp-header` annotations in a tool's
  `inputSchema` (TR-XMH-03..06, TR-XMH-10),
* header/body comparison (TR-HDR-15/16).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final

__all__ = [
    "HEADER_PARAM_PREFIX",
    "NAME_HEADER_FIELD",
    "SENTINEL_PREFIX",
    "SENTINEL_SUFFIX",
    "HeaderParam",
    "HeaderValueError",
    "InvalidHeaderAnnotation",
    "decode_header_value",
    "encode_header_value",
    "find_header_params",
    "header_matches",
    "header_param_value",
    "is_valid_header_value",
]

HEADER_PARAM_PREFIX: Final = "mcp-param-"
SENTINEL_PREFIX: Final = "=?base64?"
SENTINEL_SUFFIX: Final = "?="
ANNOTATION_KEY: Final = "x-mcp-header"
HEADER_TYPES: Final = frozenset({"string", "integer", "boolean"})
#: Methods whose `Mcp-Name` header mirrors a body field (TR-HDR-09; TASK-16 for `tasks/*`).
NAME_HEADER_FIELD: Final[Mapping[str, str]] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

# RFC 9110 §5.6.2: token = 1*tchar.
_TOKEN_RE: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# RFC 9110 §5.5: field-value chars are VCHAR, SP and HTAB.
_VALID_VALUE_RE: Final = re.compile(r"[\t\x20-\x7e]*")
# Plain values we may send unencoded: visible ASCII with inner spaces only (TR-ENC-03).
_PLAIN_VALUE_RE: Final = re.compile(r"(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?")
# A JSON number, for numeric comparison of integer parameters (TR-HDR-16).
_NUMBER_RE: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")

# Schema keywords whose values are instance data, never subschemas.
_DATA_KEYWORDS: Final = frozenset(
    {"const", "default", "enum", "examples", "required", "dependentRequired"}
)
# Schema keywords whose values map names to subschemas (other than `properties`).
_SCHEMA_MAP_KEYWORDS: Final = frozenset(
    {"patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)


class HeaderValueError(ValueError):
    """A header value claims the Base64 sentinel encoding but does not decode."""


class InvalidHeaderAnnotation(ValueError):
    """An `x-mcp-header` annotation breaks a rule; the message says which."""


@dataclass(frozen=True, slots=True)
class HeaderParam:
    """One `x-mcp-header` annotated tool parameter."""

    header: str
    """The annotation value, e.g. ``"Region"`` for the header ``Mcp-Param-Region``."""
    path: tuple[str, ...]
    """Property keys from the schema root to the annotated property."""
    type: str
    """The property's JSON Schema type: ``"string"``, ``"integer"`` or ``"boolean"``."""


def _is_sentinel(value: str) -> bool:
    return (
        len(value) >= len(SENTINEL_PREFIX) + len(SENTINEL_SUFFIX)
        and value.startswith(SENTINEL_PREFIX)
        and value.endswith(SENTINEL_SUFFIX)
    )


def encode_header_value(value: str | int | bool) -> str:
    """Render a mirrored value for an HTTP header (TR-ENC-02..05).

    Booleans become ``true``/``false`` and integers their decimal form. Strings go
    as-is when they are visible ASCII without leading/trailing whitespace and do not
    look like the sentinel; otherwise they are sent as ``=?base64?<b64 UTF-8>?=``.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise TypeError(f"cannot encode {type(value).__name__} as a header value")
    if _PLAIN_VALUE_RE.fullmatch(value) and not _is_sentinel(value):
        return value
    encoded = base64.b64encode(value.encode("utf-8")).decode("ascii")
    return f"{SENTINEL_PREFIX}{encoded}{SENTINEL_SUFFIX}"


def decode_header_value(raw: str) -> str:
    """Undo `encode_header_value` for strings (TR-ENC-04/06, TR-HDR-15).

    A value wrapped exactly in ``=?base64?`` ... ``?=`` is strictly decoded (standard
    alphabet, correct padding, canonical form, valid UTF-8); anything else is literal.
    Raises `HeaderValueError` if a wrapped value does not decode.
    """
    if not _is_sentinel(raw):
        return raw
    body = raw[len(SENTINEL_PREFIX) : -len(SENTINEL_SUFFIX)]
    if len(body) % 4:
        raise HeaderValueError("Base64 header value has invalid length or padding")
    try:
        data = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise HeaderValueError(f"Base64 header value does not decode: {exc}") from None
    if base64.b64encode(data).decode("ascii") != body:
        raise HeaderValueError("Base64 header value is not canonically encoded")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise HeaderValueError("Base64 header value is not valid UTF-8") from None


def is_valid_header_value(raw: str) -> bool:
    """True when `raw` holds only visible ASCII, SP and HTAB (TR-HDR-14, TR-XMH-14)."""
    return _VALID_VALUE_RE.fullmatch(raw) is not None


def _walk(
    node: Any, path: tuple[str, ...], reachable: bool
) -> Iterator[tuple[Mapping[str, Any], tuple[str, ...], bool]]:
    """Yield every schema object under `node` with its `properties`-only path.

    `reachable` is True only while every step from the root was a `properties` key.
    """
    if not isinstance(node, Mapping):
        return
    yield node, path, reachable
    for key, value in node.items():
        if key == ANNOTATION_KEY or key in _DATA_KEYWORDS:
            continue
        if key == "properties" and isinstance(value, Mapping):
            for name, sub in value.items():
                yield from _walk(sub, (*path, str(name)), reachable)
        elif key in _SCHEMA_MAP_KEYWORDS and isinstance(value, Mapping):
            for sub in value.values():
                yield from _walk(sub, (), False)
        elif isinstance(value, Mapping):
            yield from _walk(value, (), False)
        elif isinstance(value, list):
            for sub in value:
                yield from _walk(sub, (), False)


def find_header_params(input_schema: Mapping[str, Any]) -> list[HeaderParam]:
    """Collect and validate the `x-mcp-header` annotations of a tool's `inputSchema`.

    Raises `InvalidHeaderAnnotation` when any annotation breaks TR-XMH-03..06: a value
    that is not a non-empty RFC 9110 token, a case-insensitive duplicate, a property
    whose `type` is not exactly integer/string/boolean, or an annotation that is not
    reachable from the root through `properties` keys alone.
    """
    params: list[HeaderParam] = []
    seen: dict[str, str] = {}
    for node, path, reachable in _walk(input_schema, (), True):
        if ANNOTATION_KEY not in node:
            continue
        header = node[ANNOTATION_KEY]
        where = "/".join(path) or "<root>"
        if not reachable or not path:
            raise InvalidHeaderAnnotation(
                f"x-mcp-header {header!r} is not on a property reachable from the schema "
                "root through 'properties' keys alone"
            )
        if not isinstance(header, str) or not _TOKEN_RE.fullmatch(header):
            raise InvalidHeaderAnnotation(
                f"x-mcp-header {header!r} on property {where!r} is not a non-empty "
                "HTTP token (RFC 9110 1*tchar)"
            )
        folded = header.lower()
        if folded in seen:
            raise InvalidHeaderAnnotation(
                f"x-mcp-header {header!r} on property {where!r} duplicates "
                f"{seen[folded]!r} (names are compared case-insensitively)"
            )
        prop_type = node.get("type")
        if not isinstance(prop_type, str) or prop_type not in HEADER_TYPES:
            raise InvalidHeaderAnnotation(
                f"x-mcp-header {header!r} on property {where!r} requires type "
                f"'string', 'integer' or 'boolean', not {prop_type!r}"
            )
        seen[folded] = header
        params.append(HeaderParam(header=header, path=path, type=prop_type))
    return params


def header_param_value(arguments: Mapping[str, Any] | None, path: tuple[str, ...]) -> Any:
    """The argument at exactly `path`, or None when absent (TR-XMH-10)."""
    current: Any = arguments
    for key in path:
        if not isinstance(current, Mapping) or key not in current:
            return None
        current = current[key]
    return current


def _as_decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(value) if math.isfinite(value) else None
    if isinstance(value, str) and _NUMBER_RE.fullmatch(value):
        try:
            return Decimal(value)
        except InvalidOperation:  # exponent beyond the decimal context, e.g. "1e99999999999"
            return None
    return None


def header_matches(decoded_header: str, body_value: Any, type: str) -> bool:
    """Does a decoded `Mcp-Param-*` value agree with the body value? (TR-HDR-15/16).

    Strings compare exactly, booleans as ``true``/``false``, integers numerically
    (``42`` matches 42 and 42.0; a non-numeric header never matches).
    """
    if type == "string":
        return isinstance(body_value, str) and decoded_header == body_value
    if type == "boolean":
        return isinstance(body_value, bool) and decoded_header == (
            "true" if body_value else "false"
        )
    if type == "integer":
        body_number = None if isinstance(body_value, str) else _as_decimal(body_value)
        header_number = _as_decimal(decoded_header)
        return body_number is not None and body_number == header_number
    raise ValueError(f"unsupported x-mcp-header parameter type {type!r}")
