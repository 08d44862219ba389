"""The small wire objects of `mcpkit.protocol.content`: each field set goes on the wire under the
schema's own property name, unset ones are left off, and image and audio (one shared shape)
stay two distinct types."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.protocol.content import (
    Annotations,
    AudioContent,
    Icon,
    ImageContent,
    ToolAnnotations,
)
from wire_schemas import MODERN, SCHEMAS, schema_defs

FULL: list[tuple[Any, str]] = [
    (Annotations(["user"], 0.5, "2026-12-01T00:00:00Z"), "Annotations"),
    (Icon("https://x.test/i.png", "image/png", ["48x48"], "dark"), "Icon"),
    (ToolAnnotations("Look up", True, False, True, False), "ToolAnnotations"),
]


@pytest.mark.parametrize(("value", "definition"), FULL, ids=[d for _, d in FULL])
def test_every_field_set_is_a_property_of_its_schema(value: Any, definition: str) -> None:
    properties = set(schema_defs(str(SCHEMAS[MODERN]))[definition]["properties"])
    wire = value.to_wire()
    assert len(wire) == len(value.__slots__) and set(wire) <= properties


def test_unset_fields_are_left_off() -> None:
    assert Annotations().to_wire() == {}
    assert Icon("a.png").to_wire() == {"src": "a.png"}
    assert ToolAnnotations(read_only_hint=False).to_wire() == {"readOnlyHint": False}


@pytest.mark.parametrize(("kind", "cls"), [("image", ImageContent), ("audio", AudioContent)])
def test_binary_content_keeps_its_own_type(kind: str, cls: type[ImageContent]) -> None:
    block = cls.from_bytes(b"\x00\x01", "application/octet-stream")
    assert type(block) is cls and block.to_wire() == {
        "type": kind,
        "data": "AAE=",
        "mimeType": "application/octet-stream",
    }
    assert ImageContent("AAE=", "x/y") != AudioContent("AAE=", "x/y")
