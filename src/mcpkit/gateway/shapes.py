"""What a backend sends, made valid for the front's clients. Pure functions, no I/O.

- Results: a 2025-11-25 backend's results carry no `resultType`, which every 2026-07-28
  result must (BASE-07), and a sloppy backend may leave out a member its result type requires.
  `completed` adds them; a 2025-11-25 front strips the modern ones again on its way out
  (`server/legacy/shaping.py`).
- Tool definitions: `inputSchema` must be an object schema with `type: "object"` at its root
  (TOOL-10; both eras' schemas say so). `repaired_tool` adds what is missing where the intent
  is plain (no `type`, no schema at all, boolean property schemas; an `outputSchema` that is
  no object is dropped) and otherwise says why the tool cannot be offered: one bad tool is
  withheld, never the whole list.
"""

from __future__ import annotations

from typing import Any

#: The list each forwarded method's final result must hold besides `resultType`.
_REQUIRED = {"tools/call": "content", "prompts/get": "messages", "resources/read": "contents"}


def completed(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """A backend's result with the members the front's era requires (changed in place: the
    result was decoded for this call alone)."""
    result.setdefault("resultType", "complete")  # BASE-07; a 2025-11-25 backend has none
    key = _REQUIRED.get(method)
    if key is not None and result["resultType"] == "complete" and key not in result:
        result[key] = []
    return result


def repaired_tool(definition: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """`(definition, None)` when the tool is valid or was repaired; `(None, why)` when it
    cannot be offered (`why` completes "withheld: ...")."""
    name = definition.get("name")
    if not isinstance(name, str) or not name:
        return None, "it has no name"
    schema = definition.get("inputSchema")
    if schema is None:
        schema = {}  # no schema at all: a tool without arguments
    if not isinstance(schema, dict):
        return None, f"its inputSchema is a {type(schema).__name__}, not a JSON Schema object"
    fixed, why = _object_schema(schema)
    if fixed is None:
        return None, why
    out = definition
    if fixed is not schema or "inputSchema" not in definition:
        out = {**definition, "inputSchema": fixed}
    if "outputSchema" in out and not isinstance(out["outputSchema"], dict):
        # No schema a client can use: the tool still works, its results are just not described.
        out = {k: v for k, v in out.items() if k != "outputSchema"}
    return out, None


def _object_schema(schema: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """TOOL-10: `type: "object"` at the root; `properties` an object of schemas and
    `required` a list of names (what the 2025-11-25 schema checks)."""
    out = schema
    kind = schema.get("type")
    if kind is None or (isinstance(kind, list) and "object" in kind):
        out = {**schema, "type": "object"}  # arguments are always an object
    elif kind != "object":
        return None, f'its inputSchema has type {kind!r} where tool arguments need "object"'
    properties = schema.get("properties")
    if properties is not None:
        if not isinstance(properties, dict):
            return None, "its inputSchema's properties is not an object"
        if any(not isinstance(p, dict | bool) for p in properties.values()):
            return None, "its inputSchema has a property whose schema is not an object"
        if any(isinstance(p, bool) for p in properties.values()):
            # JSON Schema's boolean schemas, spelled as objects (true: anything; false: nothing).
            boxed = {k: _boxed(p) for k, p in properties.items()}
            out = {**out, "properties": boxed}
    required = schema.get("required")
    if required is not None and (
        not isinstance(required, list) or not all(isinstance(r, str) for r in required)
    ):
        return None, "its inputSchema's required is not a list of property names"
    return out, None


def _boxed(schema: Any) -> Any:
    if schema is True:
        return {}
    if schema is False:
        return {"not": {}}
    return schema
