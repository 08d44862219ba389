"""OpenAI Chat Completions adapter, function tools (the `openai` SDK: `pip install mcpkit[openai]`):
OpenAI, Azure OpenAI and OpenAI-compatible servers (docs/models.md says which gaps are known)."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from ..content import describe_block
from ..conversation import AssistantMessage, Message, ToolCall, ToolResults, ToolSpec, UserMessage
from .base import ModelReplyError
from .tools import openai_tools


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


def from_completion(completion: Any) -> AssistantMessage:
    if not completion.choices:  # some compatible servers answer an empty list, not an error
        raise ModelReplyError("the model API answered with no choices: try again")
    choice = completion.choices[0]
    message = choice.message
    calls = []
    for tc in message.tool_calls or []:
        try:
            args = json.loads(tc.function.arguments or "{}")
        except json.JSONDecodeError:
            args = {"__invalid_json__": tc.function.arguments}
        calls.append(
            ToolCall(
                tc.id or f"call_{uuid.uuid4().hex[:16]}",  # some compatible servers send none
                tc.function.name,
                args if isinstance(args, dict) else {"input": args},
            )
        )
    usage = getattr(completion, "usage", None)
    tokens = (usage.prompt_tokens, usage.completion_tokens) if usage is not None else None
    return AssistantMessage(message.content or "", calls, choice.finish_reason, tokens)


#: What the adapter asks of every server when it offers tools. Both are OpenAI's defaults, said
#: out loud because the host runs a turn's calls in parallel; a server that refuses either
#: (some OpenAI-compatible servers, OpenAI's reasoning models for `parallel_tool_calls`) is
#: asked again without it, once, and never again by this adapter.
COMPAT_PARAMETERS: dict[str, Any] = {"parallel_tool_calls": True, "tool_choice": "auto"}
_MENTIONS = {
    "parallel_tool_calls": re.compile(r"parallel[_ ]tool[_ ]calls", re.I),
    "tool_choice": re.compile(r"tool[_ ]choice", re.I),
}


def refused_parameters(exc: BaseException, sent: dict[str, Any]) -> set[str]:
    """The optional parameters a 400/422 answer names as the reason (none for other errors)."""
    import openai

    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 422):
        return set()
    text = f"{exc.message} {exc.body}"
    return {name for name in sent if name in _MENTIONS and _MENTIONS[name].search(text)}


class OpenAIModel:
    """Chat Completions through the `openai` SDK: OpenAI itself, Azure OpenAI (`azure_model`),
    or any OpenAI-compatible server at `base_url` (Ollama, vLLM, LM Studio, llama.cpp, ...)."""

    def __init__(
        self,
        model: str,
        *,
        client: Any = None,
        name: str | None = None,
        **client_options: Any,
    ) -> None:
        if client is None:
            import openai

            client = openai.AsyncOpenAI(**client_options)
        self.client = client
        self.model = model
        self.name = name or f"openai:{model}"
        #: Optional parameters this server refused (never sent again).
        self.refused: set[str] = set()

    async def complete(
        self, system: str | None, history: list[Message], tools: list[ToolSpec]
    ) -> AssistantMessage:
        kwargs: dict[str, Any] = {"model": self.model, "messages": to_messages(system, history)}
        optional: dict[str, Any] = {}
        if tools:
            kwargs["tools"] = openai_tools(tools)
            optional = {k: v for k, v in COMPAT_PARAMETERS.items() if k not in self.refused}
        try:
            completion = await self.client.chat.completions.create(**kwargs, **optional)
        except Exception as exc:
            refused = refused_parameters(exc, optional)
            if not refused:
                raise
            self.refused |= refused
            optional = {k: v for k, v in optional.items() if k not in refused}
            completion = await self.client.chat.completions.create(**kwargs, **optional)
        return from_completion(completion)


def azure_model(
    deployment: str,
    *,
    endpoint: str | None = None,
    api_version: str | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
) -> OpenAIModel:
    """Azure OpenAI's deployment `deployment` through the SDK's `AsyncAzureOpenAI`; what is not
    given comes from AZURE_OPENAI_ENDPOINT, OPENAI_API_VERSION, AZURE_OPENAI_API_KEY or
    AZURE_OPENAI_AD_TOKEN (the SDK's own variables)."""
    import openai

    options: dict[str, Any] = {"api_version": api_version, "api_key": api_key}
    if base_url is not None:
        options["base_url"] = base_url
    else:
        options["azure_endpoint"] = endpoint
    client = openai.AsyncAzureOpenAI(**options)
    return OpenAIModel(deployment, client=client, name=f"azure:{deployment}")
