"""The host's own, provider-neutral conversation: what model adapters translate to and from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it: namespaced name, adapted schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(slots=True)
class UserMessage:
    text: str


@dataclass(slots=True)
class AssistantMessage:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    stop_reason: str | None = None
    #: Tokens the provider reported for this call: (input, output); None when it did not.
    usage: tuple[int, int] | None = None


@dataclass(slots=True)
class ToolResult:
    call_id: str
    content: list[dict[str, Any]]  # MCP content blocks, already capped: what the model reads
    is_error: bool = False
    #: Blocks whose audience leaves out the assistant: shown to the user, never to the model.
    user_only: list[dict[str, Any]] = field(default_factory=list)
    #: The server's whole `CallToolResult` (for the UI and MCP Apps; never sent to the model).
    raw: dict[str, Any] | None = field(default=None, repr=False, compare=False)


@dataclass(slots=True)
class ToolResults:
    results: list[ToolResult]


Message = UserMessage | AssistantMessage | ToolResults
