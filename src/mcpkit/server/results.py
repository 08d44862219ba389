"""Turn what handlers return into wire content: tool results, resource contents, prompt messages."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any, Union, get_args, get_origin

import orjson

from ..protocol.content import (
    CONTENT_TYPE_NAMES,
    CONTENT_TYPES,
    BlobResourceContents,
    CallToolResult,
    PromptMessage,
    TextContent,
    TextResourceContents,
)
from .signature import strip_annotated

_UNSTRUCTURED = (str, type(None), CallToolResult, *CONTENT_TYPES)


def is_content_block(value: Any) -> bool:
    if isinstance(value, CONTENT_TYPES):
        return True
    return isinstance(value, dict) and value.get("type") in CONTENT_TYPE_NAMES


def block_to_wire(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else value.to_wire()  # type: ignore[no-any-return,unused-ignore]


def _annotation_is_unstructured(ann: Any) -> bool:
    ann = strip_annotated(ann)
    if ann is Any or ann is None or ann is object:
        return True
    if isinstance(ann, type) and issubclass(ann, _UNSTRUCTURED):
        return True
    origin = get_origin(ann)
    if origin in (list, tuple) or (origin is not None and str(origin).endswith("Sequence")):
        args = [a for a in get_args(ann) if a is not Ellipsis]
        return all(_annotation_is_unstructured(a) for a in args) if args else True
    if origin is Union or type(ann).__name__ == "UnionType":
        return all(_annotation_is_unstructured(a) for a in get_args(ann))
    return False


class OutputSpec:
    """How a tool's return value becomes a CallToolResult (decided once from the annotation)."""

    __slots__ = ("dump", "schema")

    def __init__(self, annotation: Any, structured: bool | None) -> None:
        self.schema: dict[str, Any] | None = None
        self.dump: Callable[[Any], Any] | None = None
        if structured is False or annotation is None:
            return
        if structured is None and _annotation_is_unstructured(annotation):
            return
        from pydantic import TypeAdapter  # structured output: pydantic loads on first need

        adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        schema = adapter.json_schema(mode="serialization")
        schema.pop("title", None)
        self.schema = schema

        def dump(value: Any) -> Any:
            return adapter.dump_python(value, mode="json")

        self.dump = dump


def content_list(value: Any) -> list[dict[str, Any]]:
    """Unstructured return value → list of content blocks."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if is_content_block(value):
        return [block_to_wire(value)]
    if isinstance(value, list | tuple):
        out: list[dict[str, Any]] = []
        for item in value:
            out.extend(content_list(item))
        return out
    return [{"type": "text", "text": _to_text(value)}]


def _to_text(value: Any) -> str:
    try:
        return orjson.dumps(value, default=_default).decode()
    except TypeError:
        return str(value)


def _default(obj: Any) -> Any:
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    raise TypeError


def tool_result(value: Any, output: OutputSpec) -> dict[str, Any]:
    if isinstance(value, CallToolResult):
        result: dict[str, Any] = {
            "resultType": "complete",
            "content": [block_to_wire(b) for b in value.content],
        }
        if value.structured_content is not None:
            result["structuredContent"] = value.structured_content
        if value.is_error:
            result["isError"] = True
        if value.meta:
            result["_meta"] = dict(value.meta)
        return result
    if output.dump is not None:
        structured = output.dump(value)
        text = orjson.dumps(structured).decode()
        # TOOL-16: the structured value is also given as a text block.
        return {
            "resultType": "complete",
            "content": [{"type": "text", "text": text}],
            "structuredContent": structured,
        }
    return {"resultType": "complete", "content": content_list(value)}


def error_result(message: str) -> dict[str, Any]:
    """TOOL-22: a failure the model can read and correct."""
    return {
        "resultType": "complete",
        "content": [{"type": "text", "text": message}],
        "isError": True,
    }


def resource_contents(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]]:
    """str → text, bytes → base64 blob, contents objects/dicts as given, lists of them."""
    if isinstance(value, TextResourceContents | BlobResourceContents):
        return [value.to_wire()]
    if isinstance(value, dict) and "uri" in value and ("text" in value or "blob" in value):
        return [value]
    if isinstance(value, str):
        d: dict[str, Any] = {"uri": uri, "mimeType": mime_type or "text/plain", "text": value}
        return [d]
    if isinstance(value, bytes | bytearray | memoryview):
        blob = base64.b64encode(bytes(value)).decode("ascii")
        return [{"uri": uri, "mimeType": mime_type or "application/octet-stream", "blob": blob}]
    if isinstance(value, list | tuple):
        out: list[dict[str, Any]] = []
        for item in value:
            out.extend(resource_contents(item, uri, mime_type))
        return out
    text = _to_text(value)
    return [{"uri": uri, "mimeType": mime_type or "application/json", "text": text}]


def prompt_messages(value: Any) -> list[dict[str, Any]]:
    """str → one user text message; PromptMessage/dicts/content blocks (as user) in lists."""
    if isinstance(value, str):
        return [{"role": "user", "content": {"type": "text", "text": value}}]
    if isinstance(value, PromptMessage):
        return [value.to_wire()]
    if isinstance(value, TextContent) or is_content_block(value):
        return [{"role": "user", "content": block_to_wire(value)}]
    if isinstance(value, dict) and "role" in value and "content" in value:
        return [value]
    if isinstance(value, list | tuple):
        out: list[dict[str, Any]] = []
        for item in value:
            out.extend(prompt_messages(item))
        return out
    raise TypeError(f"a prompt cannot return {type(value).__name__}")
