"""What a model adapter provides."""

from __future__ import annotations

from typing import Protocol

from ..conversation import AssistantMessage, Message, ToolSpec


class ModelAdapter(Protocol):
    name: str

    async def complete(
        self, system: str | None, history: list[Message], tools: list[ToolSpec]
    ) -> AssistantMessage:
        """The model's next message: text and/or tool calls."""
        ...


class ModelAPIError(RuntimeError):
    """A model API failure the adapter explains itself, in one line (what, why, what to do)."""


class ModelReplyError(ModelAPIError):
    """The model API answered, but with nothing an adapter can use (no choices, no candidate);
    the message says what came back and what to do."""
