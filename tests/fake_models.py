"""Loopback stand-ins for the Anthropic and OpenAI model APIs, for the real `anthropic` and
`openai` SDKs (pointed here by `base_url` or ANTHROPIC_BASE_URL / OPENAI_BASE_URL).

Each reply is a function of the request body returning a JSON body, or an `aiohttp.web.Response`
(an API error: `api_error(429)`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from support import free_port

PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}


class FakeAPI:
    """A loopback model API: records each request body, answers with the next scripted reply."""

    def __init__(self, path: str, replies: list[Callable[[dict[str, Any]], Any]]) -> None:
        self.path = path
        self.replies = replies
        self.requests: list[dict[str, Any]] = []
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        reply = self.replies[len(self.requests) - 1](body)
        return reply if isinstance(reply, web.Response) else web.json_response(reply)

    async def __aenter__(self) -> FakeAPI:
        app = web.Application()
        app.router.add_post(self.path, self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        port = free_port()
        await web.TCPSite(self.runner, "127.0.0.1", port).start()
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self.runner is not None
        await self.runner.cleanup()


def api_error(status: int, message: str = "slow down") -> web.Response:
    """An API error both SDKs parse, marked not to be retried (`x-should-retry: false`)."""
    body = {"type": "error", "error": {"type": "api_error", "message": message}}
    return web.json_response(body, status=status, headers={"x-should-retry": "false"})


def anthropic_reply(step: Any, n: int) -> dict[str, Any]:
    base = {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "fake",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    if isinstance(step, str):
        return {**base, "content": [{"type": "text", "text": step}], "stop_reason": "end_turn"}
    content = [
        {"type": "tool_use", "id": f"toolu_{n}_{i}", "name": name, "input": args}
        for i, (name, args) in enumerate(step)
    ]
    return {**base, "content": content, "stop_reason": "tool_use"}


def openai_reply(step: Any, n: int) -> dict[str, Any]:
    base = {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    if isinstance(step, str):
        message: dict[str, Any] = {"role": "assistant", "content": step}
        return {**base, "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    calls = [
        {
            "id": f"call_{n}_{i}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        for i, (name, args) in enumerate(step)
    ]
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    return {**base, "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
