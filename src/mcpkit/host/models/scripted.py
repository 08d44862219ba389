"""`ScriptedModel`: a deterministic stand-in for a language model. It is not AI: it replays a
script of steps (each a function of the conversation so far), for demos and tests that must run
with no network and no API key."""

from __future__ import annotations

from collections.abc import Callable

from ..conversation import AssistantMessage, Message, ToolSpec

Step = Callable[[list[Message], list[ToolSpec]], AssistantMessage]


class ScriptedModel:
    name = "scripted (deterministic, no AI)"

    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.position = 0

    async def complete(
        self, system: str | None, history: list[Message], tools: list[ToolSpec]
    ) -> AssistantMessage:
        if self.position >= len(self.steps):
            return AssistantMessage("(the script has ended)")
        step = self.steps[self.position]
        self.position += 1
        return step(history, tools)
