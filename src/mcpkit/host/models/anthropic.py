"""Anthropic Messages API adapter (the `anthropic` SDK: `pip install mcpkit[anthropic]`).

Prompt caching: the API caches the request's prefix (tools, then system, then messages) up to
each block marked `cache_control`, four marks at most, and a later request reads back the
longest cached prefix it finds within about 20 blocks before one of its marks. Each request
marks the last tool, the system prompt, the last message, and the message that was last in
the round before (two back: the assistant's reply and the tool results came after it), so the
previous round's cache is found however many blocks the round added (`mark_cache`).
"""

from __future__ import annotations

from typing import Any

from ..content import describe_block
from ..conversation import AssistantMessage, Message, ToolCall, ToolResults, ToolSpec, UserMessage
from .tools import anthropic_tools


def _result_block(block: dict[str, Any]) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind == "image" and block.get("mimeType") in (
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
    ):
        return {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": block["mimeType"],
                "data": block.get("data", ""),
            },
        }
    return {"type": "text", "text": describe_block(block)}


def to_messages(history: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in history:
        if isinstance(m, UserMessage):
            out.append({"role": "user", "content": m.text})
        elif isinstance(m, ToolResults):
            out.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": r.call_id,
                            "content": [_result_block(b) for b in r.content]
                            or [{"type": "text", "text": "(no output)"}],
                            "is_error": r.is_error,
                        }
                        for r in m.results
                    ],
                }
            )
        else:
            blocks: list[dict[str, Any]] = []
            if m.text:
                blocks.append({"type": "text", "text": m.text})
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                for c in m.tool_calls
            ]
            out.append({"role": "assistant", "content": blocks})
    return out


#: A breakpoint: cache the prefix up to this block (5 minutes, renewed by every read).
CACHE = {"type": "ephemeral"}


def mark_cache(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The request with its `cache_control` breakpoints (see the module docstring)."""
    out = dict(kwargs)
    if out.get("tools"):
        out["tools"] = [*out["tools"][:-1], {**out["tools"][-1], "cache_control": CACHE}]
    if out.get("system"):
        out["system"] = [{"type": "text", "text": out["system"], "cache_control": CACHE}]
    messages = list(out["messages"])
    for i in {len(messages) - 3, len(messages) - 1}:
        if i >= 0:
            messages[i] = _marked(messages[i])
    out["messages"] = messages
    return out


def _marked(message: dict[str, Any]) -> dict[str, Any]:
    content = message["content"]
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not content or (content[-1].get("type") == "text" and not content[-1].get("text")):
        return message  # the API refuses a mark on an empty text block
    return {**message, "content": [*content[:-1], {**content[-1], "cache_control": CACHE}]}


def from_message(message: Any) -> AssistantMessage:
    text, calls = [], []
    for block in message.content:
        if block.type == "text":
            text.append(block.text)
        elif block.type == "tool_use":
            calls.append(ToolCall(block.id, block.name, dict(block.input or {})))
    usage = getattr(message, "usage", None)
    tokens = None
    if usage is not None:  # input: what was read from and written to the cache, and the rest
        read = getattr(usage, "cache_read_input_tokens", None) or 0
        written = getattr(usage, "cache_creation_input_tokens", None) or 0
        tokens = (usage.input_tokens + read + written, usage.output_tokens)
    return AssistantMessage("".join(text), calls, message.stop_reason, tokens)


class AnthropicModel:
    def __init__(
        self, model: str, *, client: Any = None, max_tokens: int = 4096, **client_options: Any
    ) -> None:
        if client is None:
            import anthropic

            client = anthropic.AsyncAnthropic(**client_options)
        self.client = client
        self.model = model
        self.name = f"anthropic:{model}"
        self.max_tokens = max_tokens

    async def complete(
        self, system: str | None, history: list[Message], tools: list[ToolSpec]
    ) -> AssistantMessage:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": to_messages(history),
        }
        if system:
            kwargs["system"] = system
        if tools:
            kwargs["tools"] = anthropic_tools(tools)
        return from_message(await self.client.messages.create(**mark_cache(kwargs)))
