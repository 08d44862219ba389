"""OpenAI Chat Completions adapter, function tools (the `openai` SDK: `pip install mcpkit[openai]`)."""

from __future__ import annotations

import json
from typing import Any

from ..content import describe_block
from ..conversation import AssistantMessage, Message, ToolCall, ToolResults, ToolSpec, UserMessage


def to_messages(system: str | None, history: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in history:
        if isinstance(m, UserMessage):
            out.append({"role": "user", "content": m.text})
        elif isinstance(m, ToolResults):
            images: list[dict[str, Any]] = []
            for r in m.results:
                texts = []
                for b in r.content:
                    if b.get("type") == "image":
                        images.append(
                            {
                                "type": "image_url",
                                "image_url": {
                                    "url": f"data:{b.get('mimeType')};base64,{b.get('data', '')}"
                                },
                            }
                        )
                        texts.append("[image attached below]")
                    else:
                        texts.append(describe_block(b))
                body = "\n".join(texts) or "(no output)"
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": r.call_id,
                        "content": ("ERROR: " + body) if r.is_error else body,
                    }
                )
            if images:  # tool messages carry text only: images follow as a user message
                out.append(
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "Images returned by the tools above:"},
                            *images,
                        ],
                    }
                )
        else:
            msg: dict[str, Any] = {"role": "assistant", "content": m.text or None}
            if m.tool_calls:
                msg["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                    }
                    for c in m.tool_calls
                ]
            out.append(msg)
    return out


def to_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in tools
    ]


def from_completion(completion: Any) -> AssistantMessage:
    choice = completion.choices[0]
    message = choice.message
    calls = []
    for tc in message.tool_calls or []:
        try:
            args = json.loads(tc.function.arguments or "{}")
        except json.JSONDecodeError:
            args = {"__invalid_json__": tc.function.arguments}
        calls.append(
            ToolCall(tc.id, tc.function.name, args if isinstance(args, dict) else {"input": args})
        )
    usage = getattr(completion, "usage", None)
    tokens = (usage.prompt_tokens, usage.completion_tokens) if usage is not None else None
    return AssistantMessage(message.content or "", calls, choice.finish_reason, tokens)


class OpenAIModel:
    def __init__(self, model: str, *, client: Any = None, **client_options: Any) -> None:
        if client is None:
            import openai

            client = openai.AsyncOpenAI(**client_options)
        self.client = client
        self.model = model
        self.name = f"openai:{model}"

    async def complete(
        self, system: str | None, history: list[Message], tools: list[ToolSpec]
    ) -> AssistantMessage:
        kwargs: dict[str, Any] = {"model": self.model, "messages": to_messages(system, history)}
        if tools:
            kwargs["tools"] = to_tools(tools)
        return from_completion(await self.client.chat.completions.create(**kwargs))
