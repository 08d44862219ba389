"""Our tool definitions in each model API's tool format: the one place that knows them.

The schemas arrive adapted already (`host/schemas.py`: an object root, local `$ref`s inlined,
`$defs` gone). Anthropic and OpenAI (and every OpenAI-compatible server) take that JSON Schema
as it is. Gemini's function declarations take a subset of OpenAPI 3.0's schema object, so
`gemini_schema` converts what has an equivalent and drops what it refuses:

- `type: [T, "null"]` → `type: T, nullable: true`; several types → `anyOf`; `const` → a
  one-value `enum`; `oneOf` → `anyOf`; an `allOf` of one schema is that schema.
- `enum` only for strings: other values move into the description ("one of: 1, 2").
- `format` only where Gemini has it (`enum`, `date-time`; `int32`, `int64`; `float`,
  `double`); others (`uri`, `email`, ...) are dropped, a 400 otherwise.
- dropped: `additionalProperties`, `default`, `examples`, `exclusiveMinimum`/`Maximum`,
  `multipleOf`, `uniqueItems`, `patternProperties`, `not`, `if`/`then`/`else`, a longer
  `allOf`, `$schema`/`$id`/`$comment`, and any keyword not listed in `_GEMINI_KEEP`.
- a tool whose arguments object has no properties gets no `parameters` at all (Gemini
  refuses an OBJECT without properties there).

The model may then send arguments the server's own schema refuses (a value the dropped
`additionalProperties: false` would have forbidden, say): the server's validation answers the
model with a tool error, as for any other model.
"""

from __future__ import annotations

from typing import Any

from ..conversation import ToolSpec


def anthropic_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """The Messages API's `tools`."""
    return [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in tools
    ]


def openai_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Chat Completions' function tools (OpenAI, Azure OpenAI, OpenAI-compatible servers)."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in tools
    ]


def gemini_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Gemini's `functionDeclarations` (one `Tool` holds them all)."""
    declarations = []
    for t in tools:
        declaration: dict[str, Any] = {"name": t.name, "description": t.description}
        parameters = gemini_schema(t.input_schema)
        if parameters.get("properties"):
            declaration["parameters"] = parameters
        declarations.append(declaration)
    return declarations


#: Keywords Gemini's schema object has, copied as they are (after conversion).
_GEMINI_KEEP = (
    "description",
    "title",
    "nullable",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minProperties",
    "maxProperties",
    "pattern",
)
_TYPES = {"string", "number", "integer", "boolean", "array", "object"}
_FORMATS = {
    "string": {"enum", "date-time"},
    "integer": {"int32", "int64"},
    "number": {"float", "double"},
}
_MAX_DEPTH = 32


def gemini_schema(schema: Any, depth: int = 0) -> dict[str, Any]:
    """A JSON Schema as Gemini's schema object (see the module docstring)."""
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return {}
    schema = _merge_single_all_of(schema)
    out: dict[str, Any] = {k: schema[k] for k in _GEMINI_KEEP if k in schema}
    kind = _type(schema, out, depth)
    if kind is not None:
        out["type"] = kind.upper()
        fmt = schema.get("format")
        if isinstance(fmt, str) and fmt in _FORMATS.get(kind, ()):
            out["format"] = fmt
    _enum(schema, out)
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {
            name: gemini_schema(sub, depth + 1) for name, sub in schema["properties"].items()
        }
        required = [r for r in schema.get("required") or [] if r in out["properties"]]
        if required:
            out["required"] = required
    if isinstance(schema.get("items"), dict):
        out["items"] = gemini_schema(schema["items"], depth + 1)
    variants = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(variants, list) and "anyOf" not in out:
        out["anyOf"] = [gemini_schema(v, depth + 1) for v in variants]
    return out


def _merge_single_all_of(schema: dict[str, Any]) -> dict[str, Any]:
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
        return {**{k: v for k, v in schema.items() if k != "allOf"}, **all_of[0]}
    return schema


def _type(schema: dict[str, Any], out: dict[str, Any], depth: int) -> str | None:
    """The one type, with `nullable` for `[T, "null"]`; several types become `anyOf`."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k in _TYPES]
        if "null" in kind:
            out["nullable"] = True
        if len(kinds) > 1:
            rest = {k: v for k, v in schema.items() if k != "type"}
            out["anyOf"] = [gemini_schema({**rest, "type": k}, depth + 1) for k in kinds]
            return None
        kind = kinds[0] if kinds else None
    if kind == "null":
        out["nullable"] = True
        return None
    if kind is None and "const" in schema:
        kind = _json_type(schema["const"])
    if kind is None and isinstance(schema.get("enum"), list) and schema["enum"]:
        kind = _json_type(schema["enum"][0])
    return kind if kind in _TYPES else None


def _json_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string" if isinstance(value, str) else None


def _enum(schema: dict[str, Any], out: dict[str, Any]) -> None:
    values = [schema["const"]] if "const" in schema else schema.get("enum")
    if not isinstance(values, list) or not values:
        return
    if all(isinstance(v, str) for v in values):
        out["enum"] = list(values)
        if out.get("type") == "STRING" or "type" not in out:
            out["type"] = "STRING"
        return
    listed = "one of: " + ", ".join(str(v) for v in values)  # Gemini's enum holds strings only
    out["description"] = f"{out['description']} ({listed})" if out.get("description") else listed
