"""Tool input schemas adapted to what model APIs accept, without changing what servers get.

Model APIs are stricter than MCP: the root must be an object, local `$ref`s are inlined
(`$defs` dropped), and a root `anyOf`/`oneOf`/`allOf` is wrapped as one `input` property that
the host unwraps before `tools/call`. The server always receives the arguments its own schema
describes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

WRAP_KEY = "input"
_MAX_DEPTH = 32


@dataclass(frozen=True, slots=True)
class AdaptedSchema:
    schema: dict[str, Any]
    wrapped: bool  # the model's arguments are {"input": <the real arguments>}

    def to_server(self, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.wrapped:
            inner = arguments.get(WRAP_KEY)
            return inner if isinstance(inner, dict) else {}
        return arguments


def adapt(schema: dict[str, Any]) -> AdaptedSchema:
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        if isinstance(schema.get(key), dict):
            defs.update({f"#/{key}/{name}": sub for name, sub in schema[key].items()})
    out = _inline(copy.deepcopy(schema), defs, ())
    for key in ("$defs", "definitions", "$schema", "$id", "$anchor"):
        out.pop(key, None)
    if (
        any(k in out for k in ("anyOf", "oneOf", "allOf", "not", "if"))
        or out.get("type") != "object"
    ):
        description = out.pop("description", None)
        wrapper: dict[str, Any] = {
            "type": "object",
            "properties": {WRAP_KEY: out},
            "required": [WRAP_KEY],
            "additionalProperties": False,
        }
        if description:
            wrapper["description"] = description
        return AdaptedSchema(wrapper, True)
    out.setdefault("properties", {})
    return AdaptedSchema(out, False)


def _inline(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(n, defs, seen) for n in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref in defs:
        if ref in seen or len(seen) > _MAX_DEPTH:
            return {"description": f"(recursive {ref.rsplit('/', 1)[-1]})"}
        merged = {**copy.deepcopy(defs[ref]), **{k: v for k, v in node.items() if k != "$ref"}}
        return _inline(merged, defs, (*seen, ref))
    return {k: _inline(v, defs, seen) for k, v in node.items() if k not in ("$defs", "definitions")}


def without(schema: dict[str, Any], fields: set[str]) -> dict[str, Any]:
    """The schema with host-owned fields removed: the model never sees them."""
    if not fields or not isinstance(schema.get("properties"), dict):
        return schema
    out = dict(schema)
    out["properties"] = {k: v for k, v in schema["properties"].items() if k not in fields}
    if isinstance(schema.get("required"), list):
        out["required"] = [r for r in schema["required"] if r not in fields]
    return out
