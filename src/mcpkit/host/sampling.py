"""A server's sampling request (`sampling/createMessage`), answered by the host's model once
the consent policy allowed it (`ServerLink` asks)."""

from __future__ import annotations

from typing import Any

from .conversation import AssistantMessage, Message, UserMessage
from .models.base import ModelAdapter


async def answer_sampling(model: ModelAdapter, params: dict[str, Any]) -> dict[str, Any]:
    """The model's reply to the request's messages and system prompt, as the result."""
    history: list[Message] = []
    for m in params.get("messages") or []:
        content = m.get("content") or {}
        text = content.get("text", "") if isinstance(content, dict) else ""
        history.append(UserMessage(text) if m.get("role") == "user" else AssistantMessage(text))
    reply = await model.complete(params.get("systemPrompt"), history, [])
    return {
        "role": "assistant",
        "content": {"type": "text", "text": reply.text},
        "model": model.name,
        "stopReason": "endTurn",
    }
