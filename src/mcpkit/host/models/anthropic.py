"""Anthropic Messages API adapter (the `anthropic` SDK: `pip install mcpkit[anthropic]`)."""

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


def from_message(message: Any) -> AssistantMessage:
    text, calls = [], []
    for block in message.content:
        if block.type == "text":
            text.append(block.text)
        elif block.type == "tool_use":
            calls.append(ToolCall(block.id, block.name, dict(block.input or {})))
    usage = getattr(message, "usage", None)
    tokens = (usage.input_tokens, usage.output_tokens) if usage is not None else None
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
        return from_message(await self.client.messages.create(**kwargs))
