"""`NoModel`: the stand-in when no model is configured (no API key, no `--model`). The
inspector and MCP Apps need no model, so the web UI runs; a chat turn is refused with one
line saying how to set a model."""

from __future__ import annotations

from ..conversation import AssistantMessage, Message, ToolSpec

#: How to get a model, for a host started from the command line.
HINT = (
    "no model is set: export ANTHROPIC_API_KEY=... (or OPENAI_API_KEY, GEMINI_API_KEY), or "
    "pass --model PROVIDER:NAME (a local server: --model openai:NAME --base-url URL), and "
    "start again; the inspector and apps work without one"
)


class NoModelError(RuntimeError):
    """A turn was asked of the host without a model (the message says how to set one)."""


class NoModel:
    name = "no model"

    def __init__(self, hint: str = HINT) -> None:
        self.hint = hint

    async def complete(
        self, system: str | None, history: list[Message], tools: list[ToolSpec]
    ) -> AssistantMessage:
        raise NoModelError(self.hint)
