"""Tool definitions in each API's format (`host/models/tools.py`), Gemini's schema subset above
all: what has an equivalent is converted, what Gemini refuses is dropped."""

from __future__ import annotations

from mcpkit.host.conversation import ToolSpec
from mcpkit.host.models.tools import anthropic_tools, gemini_schema, gemini_tools, openai_tools
from mcpkit.host.schemas import adapt

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
SEARCH = ToolSpec("docs__search", "Search the docs.", SCHEMA)


def test_anthropic_and_openai_take_the_schema_as_it_is() -> None:
    assert anthropic_tools([SEARCH]) == [
        {"name": "docs__search", "description": "Search the docs.", "input_schema": SCHEMA}
    ]
    assert openai_tools([SEARCH])[0]["function"]["parameters"] is SCHEMA


def test_gemini_converts_what_has_an_equivalent() -> None:
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "when": {"type": ["string", "null"], "format": "date-time"},
            "site": {"type": "string", "format": "uri", "default": "x", "minLength": 1},
            "mode": {"const": "fast"},
            "level": {"type": "integer", "enum": [1, 2, 3], "description": "How deep"},
            "ids": {"type": "array", "items": {"type": "integer", "format": "int64"}},
            "either": {"oneOf": [{"type": "string"}, {"type": "number", "exclusiveMinimum": 0}]},
            "both": {"type": ["string", "integer"]},
            "merged": {"allOf": [{"type": "boolean"}], "description": "one allOf"},
        },
        "required": ["site", "gone"],
    }
    assert gemini_schema(schema) == {
        "type": "OBJECT",
        "properties": {
            "when": {"type": "STRING", "nullable": True, "format": "date-time"},
            "site": {"type": "STRING", "minLength": 1},
            "mode": {"type": "STRING", "enum": ["fast"]},
            "level": {"type": "INTEGER", "description": "How deep (one of: 1, 2, 3)"},
            "ids": {"type": "ARRAY", "items": {"type": "INTEGER", "format": "int64"}},
            "either": {"anyOf": [{"type": "STRING"}, {"type": "NUMBER"}]},
            "both": {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]},
            "merged": {"type": "BOOLEAN", "description": "one allOf"},
        },
        "required": ["site"],
    }


def test_gemini_declarations_and_a_tool_without_arguments() -> None:
    bare = ToolSpec("clock__now", "The time.", {"type": "object", "properties": {}})
    assert gemini_tools([SEARCH, bare]) == [
        {
            "name": "docs__search",
            "description": "Search the docs.",
            "parameters": {
                "type": "OBJECT",
                "properties": {"q": {"type": "STRING"}},
                "required": ["q"],
            },
        },
        {"name": "clock__now", "description": "The time."},
    ]


def test_gemini_after_the_host_adapted_refs() -> None:
    """`$ref`s are the host's business (inlined before any adapter sees the schema)."""
    schema = {
        "type": "object",
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
        "properties": {"at": {"$ref": "#/$defs/Point"}},
    }
    converted = gemini_schema(adapt(schema).schema)
    assert converted["properties"]["at"] == {
        "type": "OBJECT",
        "properties": {"x": {"type": "NUMBER"}},
    }


def test_gemini_survives_odd_schemas() -> None:
    deep: dict[str, object] = {"type": "object"}
    node = deep
    for _ in range(100):
        child: dict[str, object] = {"type": "object"}
        node["properties"] = {"n": child}
        node = child
    gemini_schema(deep)  # bounded depth, no RecursionError
    assert gemini_schema({"type": "null"}) == {"nullable": True}
    assert gemini_schema("not a schema") == {}
    assert gemini_schema({"enum": []}) == {}
