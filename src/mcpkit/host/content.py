"""MCP tool results → content blocks for the model (capping is `results.fit`'s job)."""

from __future__ import annotations

import json
from typing import Any


def result_blocks(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """The blocks of a CallToolResult, with structuredContent as text when no text says it."""
    blocks = [b for b in raw.get("content") or [] if isinstance(b, dict)]
    structured = raw.get("structuredContent")
    if structured is not None and not any(b.get("type") == "text" for b in blocks):
        blocks.append({"type": "text", "text": json.dumps(structured, ensure_ascii=False)})
    return blocks


def describe_block(block: dict[str, Any]) -> str:
    """A text stand-in for a block a model API cannot take."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "resource_link":
        return (
            f"[resource link: {block.get('name') or ''} <{block.get('uri')}> "
            "(read it with read_resource)]"
        )
    if kind == "resource":
        res = block.get("resource") or {}
        if "text" in res:
            return f"[resource {res.get('uri')}]\n{res['text']}"
        return f"[binary resource {res.get('uri')} ({res.get('mimeType', 'unknown type')})]"
    if kind in ("image", "audio"):
        return f"[{kind} ({block.get('mimeType', '?')}) not shown to this model]"
    return f"[{kind} content]"
