"""MCP tool results → what the model reads: content blocks capped, structured content kept."""

from __future__ import annotations

import json
from typing import Any

#: Default cap on what one tool result may put in the model's context (about 4 chars a token).
DEFAULT_MAX_TOKENS = 25_000
CHARS_PER_TOKEN = 4


def result_blocks(
    raw: dict[str, Any], max_tokens: int = DEFAULT_MAX_TOKENS
) -> list[dict[str, Any]]:
    """The blocks of a CallToolResult, with structuredContent as text when no text says it, and
    text capped at `max_tokens` with a visible note."""
    blocks = [b for b in raw.get("content") or [] if isinstance(b, dict)]
    structured = raw.get("structuredContent")
    if structured is not None and not any(b.get("type") == "text" for b in blocks):
        blocks.append({"type": "text", "text": json.dumps(structured, ensure_ascii=False)})
    return cap(blocks, max_tokens * CHARS_PER_TOKEN)


def cap(blocks: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    total = sum(len(str(b.get("text", ""))) for b in blocks)
    used = 0
    for block in blocks:
        if block.get("type") != "text":
            out.append(block)
            continue
        text = str(block.get("text", ""))
        if used + len(text) <= budget:
            out.append(block)
            used += len(text)
            continue
        keep = max(0, budget - used)
        out.append({"type": "text", "text": text[:keep]})
        out.append(
            {
                "type": "text",
                "text": f"[output truncated by the host: {budget:,} of {total:,} characters shown]",
            }
        )
        used = budget
        break
    return out


def describe_block(block: dict[str, Any]) -> str:
    """A text stand-in for a block a model API cannot take."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "resource_link":
        return f"[resource link: {block.get('name') or ''} <{block.get('uri')}>]"
    if kind == "resource":
        res = block.get("resource") or {}
        if "text" in res:
            return f"[resource {res.get('uri')}]\n{res['text']}"
        return f"[binary resource {res.get('uri')} ({res.get('mimeType', 'unknown type')})]"
    if kind in ("image", "audio"):
        return f"[{kind} ({block.get('mimeType', '?')}) not shown to this model]"
    return f"[{kind} content]"
