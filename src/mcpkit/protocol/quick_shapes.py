"""A sound shortcut for the shapes clients usually send: plain type checks that, when they say
yes, the published schema says yes too (`tests/test_shapes.py` proves it on generated and
mutated messages, and that every member the schema gives these methods is covered here).
When they cannot tell, `protocol.shapes` asks the schema itself.

It keeps the hot path (a `tools/call` with the usual `_meta`) to a few dictionary lookups and
keeps jsonschema-rs out of a server's start until some message needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .meta import LOG_LEVEL_RANK
from .versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    PROGRESS_TOKEN,
)

Check = Callable[[Any], bool]
#: A member the schema defines but this shortcut does not check: ask the schema.
UNSURE: Check = lambda value: False  # noqa: E731


def _str(value: Any) -> bool:
    return type(value) is str


def _obj(value: Any) -> bool:
    return type(value) is dict


def _objects(value: Any) -> bool:
    return type(value) is dict and all(type(v) is dict for v in value.values())


def _strings(value: Any) -> bool:
    return type(value) is dict and all(type(v) is str for v in value.values())


def _id(value: Any) -> bool:  # RequestId, ProgressToken: a string or an integer (not a bool)
    return type(value) is str or type(value) is int


def _number(value: Any) -> bool:
    return type(value) is int or type(value) is float


def _level(value: Any) -> bool:
    return type(value) is str and value in LOG_LEVEL_RANK


class Members:
    """An object whose listed members pass their checks (others: anything, as the schemas
    allow); `required` ones present."""

    __slots__ = ("fields", "required")

    def __init__(self, fields: Mapping[str, Check], required: tuple[str, ...] = ()) -> None:
        self.fields = fields
        self.required = required

    def __call__(self, value: Any) -> bool:
        if type(value) is not dict:
            return False
        for key in self.required:
            if key not in value:
                return False
        fields = self.fields
        for key, member in value.items():
            rule = fields.get(key)
            if rule is not None and not rule(member):
                return False
        return True


_implementation = Members(
    {
        "name": _str,
        "version": _str,
        "title": _str,
        "description": _str,
        "websiteUrl": _str,
        "icons": UNSURE,
    },
    ("name", "version"),
)
_modern_caps = Members(
    {
        "elicitation": Members({"form": _obj, "url": _obj}),
        "sampling": Members({"context": _obj, "tools": _obj}),
        "roots": _obj,
        "experimental": _objects,
        "extensions": _objects,
    }
)
_legacy_caps = Members(
    {
        "elicitation": Members({"form": _obj, "url": _obj}),
        "sampling": Members({"context": _obj, "tools": _obj}),
        "roots": Members({"listChanged": lambda v: type(v) is bool}),
        "experimental": _objects,
        "tasks": UNSURE,
    }
)
_modern_meta = Members(
    {
        META_PROTOCOL_VERSION: _str,
        META_CLIENT_CAPABILITIES: _modern_caps,
        META_CLIENT_INFO: _implementation,
        META_LOG_LEVEL: _level,
        PROGRESS_TOKEN: _id,
    },
    (META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES),
)
_legacy_meta = Members({PROGRESS_TOKEN: _id})
_note_meta = _obj

_M = {"_meta": _modern_meta}
_MRTR = {"requestState": _str, "inputResponses": _objects}
_L = {"_meta": _legacy_meta}
_LIST = {"cursor": _str}

#: revision → kind ("r" requests, "n" notifications) → method → params check.
QUICK: dict[str, dict[str, dict[str, Check]]] = {
    "2026-07-28": {
        "r": {
            "server/discover": Members(_M, ("_meta",)),
            "tools/list": Members({**_M, **_LIST}, ("_meta",)),
            "resources/list": Members({**_M, **_LIST}, ("_meta",)),
            "resources/templates/list": Members({**_M, **_LIST}, ("_meta",)),
            "prompts/list": Members({**_M, **_LIST}, ("_meta",)),
            "tools/call": Members(
                {**_M, **_MRTR, "name": _str, "arguments": _obj}, ("_meta", "name")
            ),
            "resources/read": Members({**_M, **_MRTR, "uri": _str}, ("_meta", "uri")),
            "prompts/get": Members(
                {**_M, **_MRTR, "name": _str, "arguments": _strings}, ("_meta", "name")
            ),
        },
        "n": {
            "notifications/cancelled": Members(
                {"requestId": _id, "reason": _str, "_meta": _note_meta}, ("requestId",)
            ),
        },
    },
    "2025-11-25": {
        "r": {
            "initialize": Members(
                {
                    **_L,
                    "protocolVersion": _str,
                    "capabilities": _legacy_caps,
                    "clientInfo": _implementation,
                },
                ("protocolVersion", "capabilities", "clientInfo"),
            ),
            "ping": Members(_L),
            "tools/list": Members({**_L, **_LIST}),
            "resources/list": Members({**_L, **_LIST}),
            "resources/templates/list": Members({**_L, **_LIST}),
            "prompts/list": Members({**_L, **_LIST}),
            "tools/call": Members(
                {**_L, "name": _str, "arguments": _obj, "task": UNSURE}, ("name",)
            ),
            "resources/read": Members({**_L, "uri": _str}, ("uri",)),
            "resources/subscribe": Members({**_L, "uri": _str}, ("uri",)),
            "resources/unsubscribe": Members({**_L, "uri": _str}, ("uri",)),
            "prompts/get": Members({**_L, "name": _str, "arguments": _strings}, ("name",)),
            "logging/setLevel": Members({**_L, "level": _level}, ("level",)),
        },
        "n": {
            "notifications/initialized": Members({"_meta": _note_meta}),
            "notifications/roots/list_changed": Members({"_meta": _note_meta}),
            "notifications/cancelled": Members(
                {"requestId": _id, "reason": _str, "_meta": _note_meta}
            ),
            "notifications/progress": Members(
                {
                    "progressToken": _id,
                    "progress": _number,
                    "total": _number,
                    "message": _str,
                    "_meta": _note_meta,
                },
                ("progressToken", "progress"),
            ),
        },
    },
}
