"""Tests for mcpkit.protocol.headers (CHECKLIST TR-ENC-*, TR-XMH-*, TR-HDR-14..16)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from mcpkit.protocol.headers import (
    HEADER_PARAM_PREFIX,
    HeaderParam,
    HeaderValueError,
    InvalidHeaderAnnotation,
    decode_header_value,
    encode_header_value,
    find_header_params,
    header_matches,
    header_param_value,
    is_valid_header_value,
)

# --- Value encoding -----------------------------------------------------------

# The examples table from streamable-http "Value Encoding".
SPEC_EXAMPLES = [
    ("us-west1", "us-west1"),  # TR-ENC-02: plain ASCII as-is
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),  # TR-ENC-03: non-ASCII
    (" padded ", "=?base64?IHBhZGRlZCA=?="),  # TR-ENC-03: leading/trailing spaces
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),  # TR-ENC-03: control character
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),  # TR-ENC-05
]


@pytest.mark.parametrize(("original", "encoded"), SPEC_EXAMPLES)
def test_spec_encoding_examples(original: str, encoded: str) -> None:
    # TR-ENC-02, TR-ENC-03, TR-ENC-05
    assert encode_header_value(original) == encoded
    assert decode_header_value(encoded) == original  # TR-ENC-06


@pytest.mark.parametrize(
    ("value", "expected"),
    [(42, "42"), (-7, "-7"), (0, "0"), (True, "true"), (False, "false")],
)
def test_encode_integers_and_booleans(value: int | bool, expected: str) -> None:
    # TR-ENC-02
    assert encode_header_value(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "a b c",
        "Seattle, WA",
        "file:///projects/myapp/config.json",
        "~!@#$%^&*()",
        "=?base64?x",
        "x?=",
    ],
)
def test_plain_ascii_strings_pass_through(value: str) -> None:
    # TR-ENC-02: visible ASCII with inner spaces needs no encoding
    assert encode_header_value(value) == value


@pytest.mark.parametrize(
    "value",
    ["tab\there", "cr\rlf", "\x00", "del\x7f", "café", " lead", "trail ", "\ttab", "=?base64??="],
)
def test_unsafe_strings_are_sentinel_encoded(value: str) -> None:
    # TR-ENC-03 (control chars, non-ASCII, edge whitespace), TR-ENC-05 (sentinel look-alike)
    encoded = encode_header_value(value)
    assert encoded.startswith("=?base64?") and encoded.endswith("?=")
    assert is_valid_header_value(encoded)
    assert decode_header_value(encoded) == value


def test_encode_rejects_other_types() -> None:
    with pytest.raises(TypeError):
        encode_header_value(1.5)  # type: ignore[arg-type]


def test_decode_valid_and_literal_values() -> None:
    # TR-ENC-04: markers are exact and lowercase; otherwise the value is literal
    assert decode_header_value("=?base64?SGVsbG8=?=") == "Hello"
    assert decode_header_value("=?base64?SGVsbG8=") == "=?base64?SGVsbG8="
    assert decode_header_value("SGVsbG8=?=") == "SGVsbG8=?="
    assert decode_header_value("=?BASE64?SGVsbG8=?=") == "=?BASE64?SGVsbG8=?="
    assert decode_header_value("=?base64?=") == "=?base64?="  # overlapping markers: too short
    assert decode_header_value("=?base64??=") == ""
    assert decode_header_value("plain") == "plain"
    assert decode_header_value("") == ""


@pytest.mark.parametrize(
    "raw",
    [
        "=?base64?SGVsbG8?=",  # bad padding
        "=?base64?SGVs!!!bG8=?=",  # bad characters
        "=?base64?SG!sbG8=?=",  # bad character, right length
        "=?base64?SGVs bG8=?=",  # whitespace inside
        "=?base64?SGVsbG8-_w==?=",  # URL-safe alphabet
        "=?base64?SGVsbG9=?=",  # non-canonical trailing bits
        "=?base64?SG==bG8=?=",  # padding in the middle
        "=?base64?/w==?=",  # not UTF-8
    ],
)
def test_decode_rejects_malformed_base64(raw: str) -> None:
    # TR-HDR-15 / TR-HDR-14: a malformed encoded value is a validation failure
    with pytest.raises(HeaderValueError):
        decode_header_value(raw)
    assert issubclass(HeaderValueError, ValueError)


def test_is_valid_header_value() -> None:
    # TR-HDR-14, TR-XMH-14
    assert is_valid_header_value("us-west1")
    assert is_valid_header_value("a b\tc ~")
    assert is_valid_header_value("")
    for bad in ("a\nb", "a\rb", "\x00", "\x1f", "\x7f", "é", "世界"):
        assert not is_valid_header_value(bad)


# --- x-mcp-header discovery -----------------------------------------------------


def _schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def test_find_spec_example() -> None:
    # TR-XMH-01
    schema = _schema(
        region={"type": "string", "x-mcp-header": "Region"},
        query={"type": "string"},
    )
    assert find_header_params(schema) == [HeaderParam("Region", ("region",), "string")]
    assert HEADER_PARAM_PREFIX == "mcp-param-"


def test_find_nested_and_all_types() -> None:
    # TR-XMH-05, TR-XMH-06: nested objects through `properties` are fine
    schema = _schema(
        location=_schema(
            region={"type": "string", "x-mcp-header": "Region"},
            zone={"type": "integer", "x-mcp-header": "Zone"},
        ),
        dry_run={"type": "boolean", "x-mcp-header": "Dry-Run"},
        tenant={"type": "string", "x-mcp-header": "x!#$%&'*+-.^_`|~9"},
    )
    params = find_header_params(schema)
    assert [(p.header, p.path, p.type) for p in params] == [
        ("Region", ("location", "region"), "string"),
        ("Zone", ("location", "zone"), "integer"),
        ("Dry-Run", ("dry_run",), "boolean"),
        ("x!#$%&'*+-.^_`|~9", ("tenant",), "string"),
    ]


def test_find_no_annotations() -> None:
    assert find_header_params({}) == []
    assert find_header_params(_schema(a={"type": "string"})) == []
    # A property *named* x-mcp-header and data values are not annotations.
    schema = _schema(**{"x-mcp-header": {"type": "string", "default": {"x-mcp-header": "A"}}})
    schema["required"] = ["x-mcp-header"]
    schema["examples"] = [{"x-mcp-header": "!!"}]
    assert find_header_params(schema) == []


def test_header_param_is_frozen() -> None:
    p = HeaderParam("Region", ("region",), "string")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.header = "Other"  # type: ignore[misc]


@pytest.mark.parametrize(
    "name",
    ["", "Has Space", "Line\r\nBreak", "Colon:", "Slash/", "Ünïcode", "(paren)", "Tab\t", 42, None],
)
def test_invalid_header_names(name: Any) -> None:
    # TR-XMH-03: non-empty RFC 9110 token without control characters
    with pytest.raises(InvalidHeaderAnnotation, match="token"):
        find_header_params(_schema(a={"type": "string", "x-mcp-header": name}))


def test_duplicate_names_case_insensitive() -> None:
    # TR-XMH-04
    schema = _schema(
        a={"type": "string", "x-mcp-header": "Region"},
        b=_schema(c={"type": "string", "x-mcp-header": "REGION"}),
    )
    with pytest.raises(InvalidHeaderAnnotation, match="duplicate"):
        find_header_params(schema)


@pytest.mark.parametrize(
    "prop_type",
    ["number", "object", "array", "null", None, ["string", "null"], ["string"]],
)
def test_invalid_property_types(prop_type: Any) -> None:
    # TR-XMH-05: only integer, string or boolean; never number
    prop: dict[str, Any] = {"x-mcp-header": "Value"}
    if prop_type is not None:
        prop["type"] = prop_type
    with pytest.raises(InvalidHeaderAnnotation, match="type"):
        find_header_params(_schema(v=prop))


ANNOTATED = {"type": "string", "x-mcp-header": "Bad"}


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "x-mcp-header": "Bad"},  # on the root itself
        _schema(list={"type": "array", "items": ANNOTATED}),
        _schema(list={"type": "array", "prefixItems": [ANNOTATED]}),
        _schema(list={"type": "array", "contains": ANNOTATED}),
        {"type": "object", "oneOf": [_schema(a=ANNOTATED)]},
        {"type": "object", "anyOf": [_schema(a=ANNOTATED)]},
        {"type": "object", "allOf": [_schema(a=ANNOTATED)]},
        {"type": "object", "not": _schema(a=ANNOTATED)},
        _schema(a={"anyOf": [ANNOTATED, {"type": "null"}]}),
        {"type": "object", "if": _schema(a=ANNOTATED), "then": {}, "else": {}},
        {"type": "object", "if": {}, "then": _schema(a=ANNOTATED)},
        {"type": "object", "if": {}, "else": _schema(a=ANNOTATED)},
        {**_schema(a={"$ref": "#/$defs/A"}), "$defs": {"A": ANNOTATED}},
        {**_schema(a={"$ref": "#/definitions/A"}), "definitions": {"A": ANNOTATED}},
        {"type": "object", "additionalProperties": ANNOTATED},
        {"type": "object", "patternProperties": {"^a": ANNOTATED}},
        {"type": "object", "dependentSchemas": {"a": _schema(b=ANNOTATED)}},
        {"type": "object", "propertyNames": ANNOTATED},
        {"type": "object", "unevaluatedProperties": ANNOTATED},
        _schema(deep=_schema(list={"type": "array", "items": _schema(x=ANNOTATED)})),
    ],
)
def test_annotations_must_be_statically_reachable(schema: dict[str, Any]) -> None:
    # TR-XMH-06: only chains of `properties` keys; anything else invalidates the tool
    with pytest.raises(InvalidHeaderAnnotation, match="reachable"):
        find_header_params(schema)


def test_misplaced_annotation_next_to_valid_one() -> None:
    # TR-XMH-06/07: one misplaced annotation invalidates the whole definition
    schema = _schema(ok={"type": "string", "x-mcp-header": "Ok"})
    schema["$defs"] = {"X": ANNOTATED}
    with pytest.raises(InvalidHeaderAnnotation):
        find_header_params(schema)


# --- Extraction and comparison ----------------------------------------------------


def test_header_param_value() -> None:
    # TR-XMH-10, TR-XMH-17: exact path; absent or null -> None (header omitted)
    args = {"region": "us-west1", "location": {"zone": 3, "none": None}, "flat": "x"}
    assert header_param_value(args, ("region",)) == "us-west1"
    assert header_param_value(args, ("location", "zone")) == 3
    assert header_param_value(args, ("location", "none")) is None
    assert header_param_value(args, ("location", "missing")) is None
    assert header_param_value(args, ("flat", "deeper")) is None
    assert header_param_value(args, ("missing",)) is None
    assert header_param_value(None, ("region",)) is None
    assert header_param_value({"a": False}, ("a",)) is False
    assert header_param_value({"a": 0}, ("a",)) == 0


def test_header_matches_strings() -> None:
    # TR-HDR-11 (values are case-sensitive), TR-HDR-15
    assert header_matches("us-west1", "us-west1", "string")
    assert not header_matches("US-WEST1", "us-west1", "string")
    assert not header_matches("42", 42, "string")
    assert header_matches(
        decode_header_value("=?base64?SGVsbG8sIOS4lueVjA==?="), "Hello, 世界", "string"
    )


def test_header_matches_booleans() -> None:
    assert header_matches("true", True, "boolean")
    assert header_matches("false", False, "boolean")
    assert not header_matches("True", True, "boolean")
    assert not header_matches("1", True, "boolean")
    assert not header_matches("true", "true", "boolean")
    assert not header_matches("false", 0, "boolean")


@pytest.mark.parametrize(
    ("header", "body", "expected"),
    [
        ("42", 42, True),  # TR-HDR-16
        ("42", 42.0, True),  # TR-HDR-16: numeric, not string, comparison
        ("42.0", 42, True),
        ("-7", -7, True),
        ("9007199254740991", 9007199254740991, True),
        ("9007199254740993", 9007199254740992, False),  # no float rounding
        ("43", 42, False),
        ("forty-two", 42, False),  # non-numeric header never matches
        ("", 0, False),
        (" 42", 42, False),
        ("+42", 42, False),
        ("0x2a", 42, False),
        ("NaN", float("nan"), False),
        ("1e99999999999999999999", 1, False),
        ("42", "42", False),  # body must be a number
        ("1", True, False),  # booleans are not integers
        ("42", None, False),
    ],
)
def test_header_matches_integers(header: str, body: Any, expected: bool) -> None:
    assert header_matches(header, body, "integer") is expected


def test_header_matches_unknown_type() -> None:
    with pytest.raises(ValueError):
        header_matches("1.5", 1.5, "number")


def test_client_server_round_trip() -> None:
    # TR-ENC-01, TR-XMH-11, TR-XMH-15: what a client sends, a server accepts
    schema = _schema(
        text={"type": "string", "x-mcp-header": "Text"},
        n={"type": "integer", "x-mcp-header": "N"},
        flag={"type": "boolean", "x-mcp-header": "Flag"},
    )
    args = {"text": " weird\r\nvalue 世界 ", "n": -12, "flag": True}
    for param in find_header_params(schema):
        value = header_param_value(args, param.path)
        raw = encode_header_value(value)
        assert is_valid_header_value(raw)
        assert header_matches(decode_header_value(raw), value, param.type)
