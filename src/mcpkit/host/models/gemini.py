"""Gemini adapter through Google's official SDK (`google-genai`: `pip install 'mcpkit[gemini]'`).

The key comes from GEMINI_API_KEY or GOOGLE_API_KEY (the SDK reads them) unless given. Tool
schemas go through `tools.gemini_schema` (Gemini takes a subset of JSON Schema). Gemini may
leave a function call's `id` out: the adapter then names the call itself and sends no id back
with its result. A call's `thoughtSignature` (Gemini 3's reasoning state, which must come back
with the call on the next request) is kept by call id and sent back with it.
"""

from __future__ import annotations

import base64
import itertools
from typing import Any

from ..content import describe_block
from ..conversation import AssistantMessage, Message, ToolCall, ToolResults, ToolSpec, UserMessage
from .base import ModelAPIError, ModelReplyError
from .tools import gemini_tools

#: Ids the adapter made up for calls Gemini sent without one (never sent back to Gemini).
_OWN_ID = "mcpkit-call-"
#: Thought signatures kept (one per call; a long-running web UI must not grow without end).
_SIGNATURES_KEPT = 4096
_IMAGES = ("image/png", "image/jpeg", "image/webp", "image/heic", "image/heif")


class GeminiModel:
    """`gemini:NAME` through `google.genai.Client(...).aio.models.generate_content`."""

    def __init__(
        self,
        model: str,
        *,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        attempts: int = 3,
        retry_delay: float = 1.0,
    ) -> None:
        if client is None:
            client = make_client(api_key, base_url, attempts, retry_delay)
        self.client = client
        self.model = model
        self.name = f"gemini:{model}"
        self._ids = itertools.count(1)
        #: call id → the thought signature Gemini sent with that call.
        self._signatures: dict[str, bytes] = {}

    async def complete(
        self, system: str | None, history: list[Message], tools: list[ToolSpec]
    ) -> AssistantMessage:
        config: dict[str, Any] = {}
        if system:
            config["system_instruction"] = system
        if tools:
            config["tools"] = [{"function_declarations": gemini_tools(tools)}]
        try:
            response = await self.client.aio.models.generate_content(
                model=self.model, contents=self.to_contents(history), config=config or None
            )
        except OSError as exc:  # aiohttp's connection errors (the SDK's own are APIError)
            raise ModelAPIError(
                f"cannot reach the gemini API: {exc}; check the network (or --base-url)"
            ) from exc
        return self.from_response(response)

    def to_contents(self, history: list[Message]) -> list[dict[str, Any]]:
        names: dict[str, str] = {}  # call id → tool name (a function response names its call)
        out: list[dict[str, Any]] = []
        for m in history:
            if isinstance(m, UserMessage):
                out.append({"role": "user", "parts": [{"text": m.text}]})
            elif isinstance(m, ToolResults):
                out.append({"role": "user", "parts": _result_parts(m, names)})
            else:
                parts: list[dict[str, Any]] = [{"text": m.text}] if m.text else []
                for c in m.tool_calls:
                    names[c.id] = c.name
                    call: dict[str, Any] = {"name": c.name, "args": c.arguments}
                    if not c.id.startswith(_OWN_ID):
                        call["id"] = c.id
                    part: dict[str, Any] = {"function_call": call}
                    if c.id in self._signatures:
                        part["thought_signature"] = self._signatures[c.id]
                    parts.append(part)
                if parts:  # an empty reply has nothing to send back (Gemini refuses it)
                    out.append({"role": "model", "parts": parts})
        return out

    def _remember(self, call_id: str, signature: bytes) -> None:
        if len(self._signatures) >= _SIGNATURES_KEPT:  # the oldest conversations' go first
            del self._signatures[next(iter(self._signatures))]
        self._signatures[call_id] = signature

    def from_response(self, response: Any) -> AssistantMessage:
        candidates = response.candidates or []
        if not candidates or candidates[0].content is None:
            feedback = response.prompt_feedback
            reason = feedback.block_reason if feedback is not None else None
            why = f" (blocked: {_enum_text(reason)})" if reason else ""
            raise ModelReplyError(f"Gemini answered with no candidate{why}: rephrase and ask again")
        candidate = candidates[0]
        text, calls = [], []
        for part in candidate.content.parts or []:
            if part.function_call is not None:
                fc = part.function_call
                call_id = fc.id or f"{_OWN_ID}{next(self._ids)}"
                if part.thought_signature:
                    self._remember(call_id, part.thought_signature)
                calls.append(ToolCall(call_id, fc.name or "", dict(fc.args or {})))
            elif part.text and not part.thought:
                text.append(part.text)
        usage = response.usage_metadata
        tokens = (
            (usage.prompt_token_count or 0, usage.candidates_token_count or 0)
            if usage is not None
            else None
        )
        reason = _enum_text(candidate.finish_reason) if candidate.finish_reason else None
        return AssistantMessage("".join(text), calls, reason, tokens)


def make_client(api_key: str | None, base_url: str | None, attempts: int, delay: float) -> Any:
    """A `google.genai.Client` that retries 429 and 5xx answers (`attempts` tries in all, the
    first wait `delay` seconds, then doubling)."""
    from google import genai
    from google.genai import types

    retry = types.HttpRetryOptions(
        attempts=attempts,
        initial_delay=delay,
        jitter=delay,  # up to one more `delay` at random (0 would mean the SDK's 1 s)
        http_status_codes=[429, 500, 502, 503, 504],
    )
    options = types.HttpOptions(base_url=base_url, retry_options=retry)
    return genai.Client(api_key=api_key, http_options=options)


def _result_parts(m: ToolResults, names: dict[str, str]) -> list[dict[str, Any]]:
    """One function response per result; its images follow as inline data."""
    parts: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []
    for r in m.results:
        texts = []
        for b in r.content:
            data = _image(b)
            if data is not None:
                images.append({"inline_data": {"mime_type": b["mimeType"], "data": data}})
                texts.append("[image attached below]")
            else:
                texts.append(describe_block(b))
        body = "\n".join(texts) or "(no output)"
        response: dict[str, Any] = {"name": names.get(r.call_id, "tool")}
        response["response"] = {"error": body} if r.is_error else {"output": body}
        if not r.call_id.startswith(_OWN_ID):
            response["id"] = r.call_id
        parts.append({"function_response": response})
    return parts + images


def _image(block: dict[str, Any]) -> bytes | None:
    """An image block's bytes, for the image types Gemini reads (else None: described)."""
    if block.get("type") != "image" or block.get("mimeType") not in _IMAGES:
        return None
    try:
        return base64.b64decode(str(block.get("data", "")), validate=True)
    except ValueError:  # not base64: described as text instead
        return None


def _enum_text(value: Any) -> str:
    return str(getattr(value, "value", value))
