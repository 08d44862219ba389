"""`protocol/shapes.json` is exactly what the published schemas (tests/data) say a client may
send, and `protocol.shapes` accepts what they accept and refuses what they refuse.

Regenerate the packaged file after updating tests/data: `python tests/test_shapes.py --write`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit.protocol.errors import InvalidParams
from mcpkit.protocol.shapes import PACKAGED, shapes_for

DATA = Path(__file__).resolve().parent / "data"
#: revision → (its schema, extension schemas whose client requests it also serves)
SOURCES = {
    "2026-07-28": ("schema-2026-07-28.json", ["schema-ext-tasks-draft.json"]),
    "2025-11-25": ("schema-2025-11-25.json", []),
}
#: The extension's requests a client sends (its other definitions are server → client).
EXTENSION_REQUESTS = ["GetTaskRequest", "UpdateTaskRequest", "CancelTaskRequest"]


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name).read_text())
    return data


def _parts(definition: dict[str, Any]) -> list[dict[str, Any]]:
    return [definition, *definition.get("allOf", [])]


def _method(definition: dict[str, Any]) -> str:
    for part in _parts(definition):
        const = part.get("properties", {}).get("method", {}).get("const")
        if const is not None:
            return str(const)
    raise ValueError("no method const")


def _params(definition: dict[str, Any]) -> dict[str, Any]:
    for part in _parts(definition):
        params = part.get("properties", {}).get("params")
        if params is not None:
            return dict(params)
    return {"type": "object"}


def _union(defs: dict[str, Any], name: str) -> list[str]:
    definition = defs[name]
    if "anyOf" in definition:
        return [ref["$ref"].rsplit("/", 1)[1] for ref in definition["anyOf"]]
    return [name]


def _strip(node: Any) -> Any:
    """Drop annotations that only document (a property *named* description stays)."""
    if isinstance(node, dict):
        return {
            k: _strip(v)
            for k, v in node.items()
            if not (k in ("description", "$comment") and isinstance(v, str)) and k != "$schema"
        }
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _refs(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                out.add(value.rsplit("/", 1)[1])
            else:
                _refs(value, out)
    elif isinstance(node, list):
        for value in node:
            _refs(value, out)


def extract(schema: dict[str, Any], extensions: list[dict[str, Any]]) -> dict[str, Any]:
    defs = dict(schema["$defs"])
    requests = [defs[n] for n in _union(defs, "ClientRequest")]
    for ext in extensions:
        for key, value in ext["$defs"].items():
            assert defs.setdefault(key, value) == value, key  # no clash with the core
        requests += [ext["$defs"][n] for n in EXTENSION_REQUESTS]
    notifications = [defs[n] for n in _union(defs, "ClientNotification")]
    out: dict[str, Any] = {
        "requests": {_method(d): _strip(_params(d)) for d in sorted(requests, key=_method)},
        "notifications": {
            _method(d): _strip(_params(d)) for d in sorted(notifications, key=_method)
        },
    }
    needed: set[str] = set()
    _refs(out, needed)
    todo = list(needed)
    while todo:
        found: set[str] = set()
        _refs(defs[todo.pop()], found)
        todo += [n for n in found - needed]
        needed |= found
    out["$defs"] = {name: _strip(defs[name]) for name in sorted(needed)}
    return out


def expected() -> dict[str, Any]:
    return {
        rev: extract(load(core), [load(e) for e in exts]) for rev, (core, exts) in SOURCES.items()
    }


def test_packaged_shapes_are_the_published_schemas() -> None:
    assert json.loads(PACKAGED.read_text()) == expected(), (
        "src/mcpkit/protocol/shapes.json is stale: python tests/test_shapes.py --write"
    )


@pytest.mark.parametrize("revision", list(SOURCES))
def test_every_client_method_has_a_shape(revision: str) -> None:
    data = expected()[revision]
    shapes = shapes_for(revision)
    for method in data["requests"]:
        assert shapes.request_known(method)
    for method in data["notifications"]:
        assert shapes.notification_known(method)


def test_shapes_accept_and_refuse_like_the_schema() -> None:
    shapes = shapes_for("2026-07-28")
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    shapes.check_request("tools/call", {"name": "x", "_meta": meta})
    with pytest.raises(InvalidParams, match="name"):
        shapes.check_request("tools/call", {"name": ["x"], "_meta": meta})
    with pytest.raises(InvalidParams, match="clientInfo"):
        bad = {**meta, "io.modelcontextprotocol/clientInfo": {"name": "no version"}}
        shapes.check_request("tools/list", {"_meta": bad})
    shapes.check_notification("notifications/cancelled", {"requestId": 3})
    with pytest.raises(InvalidParams, match="requestId"):
        shapes.check_notification("notifications/cancelled", {"requestId": [3]})
    legacy = shapes_for("2025-11-25")
    with pytest.raises(InvalidParams, match="level"):
        legacy.check_request("logging/setLevel", {"level": ["debug"]})
    legacy.check_request("logging/setLevel", {"level": "debug"})
    legacy.check_request("ping", None)


if __name__ == "__main__" and "--write" in sys.argv:
    PACKAGED.write_text(json.dumps(expected(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {PACKAGED}")
