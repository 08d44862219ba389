"""Wire formats of the model APIs the adapters speak, for `host_support.FakeAPI`: OpenAI-compatible
servers' own error shapes, Azure OpenAI's deployment path, and Gemini's `generateContent`."""

from __future__ import annotations

import base64
from typing import Any

from aiohttp import web

from host_support import Step

AZURE_PATH = "/openai/deployments/{deployment}/chat/completions"
GEMINI_PATH = "/{version}/models/{target}"  # v1 or v1beta, {model}:generateContent
COMPAT_PATH = "/v1/chat/completions"


def plain_error(status: int, text: str, content_type: str = "text/plain") -> web.Response:
    """An error body that is not OpenAI's JSON (not retried by the SDK)."""
    return web.Response(
        status=status, text=text, content_type=content_type, headers={"x-should-retry": "false"}
    )


def json_error(status: int, body: dict[str, Any]) -> web.Response:
    return web.json_response(body, status=status, headers={"x-should-retry": "false"})


def rate_limited(body: dict[str, Any] | None = None) -> web.Response:
    """A 429 that asks for a retry after a millisecond (the `openai` SDK honours it)."""
    body = body or {"error": {"message": "rate limit reached", "type": "rate_limit"}}
    return web.json_response(body, status=429, headers={"retry-after-ms": "1"})


def gemini_error(status: int, message: str, state: str) -> web.Response:
    """Google's error shape: `{"error": {"code", "message", "status"}}`."""
    body = {"error": {"code": status, "message": message, "status": state}}
    return web.json_response(body, status=status)


SIGNATURE = b"thinking-state"


def gemini_reply(step: Step, *, ids: bool = False, signed: bool = False) -> dict[str, Any]:
    """A `GenerateContentResponse`: text, or function calls (with ids and a thought signature
    on the first call when asked)."""
    if isinstance(step, str):
        parts: list[dict[str, Any]] = [{"text": step}]
    else:
        parts = []
        for i, (name, args) in enumerate(step):
            call: dict[str, Any] = {"name": name, "args": args}
            if ids:
                call["id"] = f"fc_{i}"
            part: dict[str, Any] = {"functionCall": call}
            if signed and i == 0:
                part["thoughtSignature"] = base64.b64encode(SIGNATURE).decode()
            parts.append(part)
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 3, "totalTokenCount": 10},
        "modelVersion": "fake",
    }


class GeminiClosing:
    """What `FakeAPI` closes for a Gemini adapter's client (its sessions are per event loop)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def close(self) -> None:
        await self.client.aio.aclose()
