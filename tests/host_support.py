"""Shared helpers for host tests: a non-interactive UI, loopback fake model APIs that the real
`anthropic` and `openai` SDKs talk to, and provider-neutral views of the requests they got."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from mcpkit.client.inputs import Elicitation
from mcpkit.host import Decision, PendingCall
from mcpkit.host.conversation import ToolResult
from support import free_port, wait_port

__all__ = ["free_port", "wait_port"]  # re-exported: host tests import their helpers from here

PROVIDERS = ["anthropic", "openai"]
#: A step of a scripted model: tool calls [(name, arguments)] or a final text.
Step = list[tuple[str, dict[str, Any]]] | str


class RecordingUI:
    """Non-interactive user: allows everything except cancellations; confirms returns."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def user(self, text: str) -> None:
        self.events.append(("user", text))

    def assistant(self, text: str) -> None:
        self.events.append(("assistant", text))

    def tool_call(self, call: PendingCall, decision: Decision) -> None:
        self.events.append(("call", (call.alias, decision)))

    async def confirm(self, call: PendingCall) -> bool:
        self.events.append(("confirm", call.alias))
        return not call.tool.startswith("cancel")

    def tool_result(self, call: PendingCall, result: ToolResult) -> None:
        self.events.append(("result", (call.alias, result.is_error)))
        if result.user_only:
            self.events.append(("user_only", result.user_only))

    def progress(
        self, call: PendingCall, progress: float, total: float | None, message: str | None
    ) -> None:
        self.events.append(("progress", call.alias))

    async def elicit(self, server: str, request: Elicitation) -> dict[str, Any]:
        self.events.append(("elicit", server))
        return {"action": "accept", "content": {"confirm": True}}

    def warn(self, text: str) -> None:
        self.events.append(("warn", text))

    def info(self, text: str) -> None:
        self.events.append(("info", text))


class FakeAPI:
    """A loopback model API: records each request body, answers with the next scripted reply."""

    def __init__(
        self, path: str, replies: list[Callable[[dict[str, Any]], dict[str, Any]]]
    ) -> None:
        self.path = path
        self.replies = replies
        self.requests: list[dict[str, Any]] = []
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        return web.json_response(self.replies[len(self.requests) - 1](body))

    async def __aenter__(self) -> FakeAPI:
        app = web.Application(client_max_size=64 * 1024 * 1024)
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


def anthropic_reply(step: Step, n: int) -> dict[str, Any]:
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


def openai_reply(step: Step, n: int) -> dict[str, Any]:
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


def api_path(provider: str) -> str:
    return "/v1/messages" if provider == "anthropic" else "/v1/chat/completions"


def scripted(
    provider: str, steps: list[Step | Callable[[dict[str, Any]], Step]]
) -> list[Callable[[dict[str, Any]], dict[str, Any]]]:
    """Replies for `FakeAPI`: each step is fixed, or computed from the request body."""
    make = anthropic_reply if provider == "anthropic" else openai_reply

    def reply(step: Any, n: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
        return lambda body: make(step(body) if callable(step) else step, n)

    return [reply(step, n) for n, step in enumerate(steps)]


def sdk_model(provider: str, api: FakeAPI) -> Any:
    """The host's adapter on the real SDK, pointed at the fake API."""
    if provider == "anthropic":
        import anthropic

        from mcpkit.host.models.anthropic import AnthropicModel

        return AnthropicModel(
            "fake", client=anthropic.AsyncAnthropic(api_key="test", base_url=api.url)
        )
    import openai

    from mcpkit.host.models.openai import OpenAIModel

    return OpenAIModel("fake", client=openai.AsyncOpenAI(api_key="test", base_url=api.url + "/v1"))


def tool_names(provider: str, body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    if provider == "anthropic":
        return {t["name"]: t["input_schema"] for t in body.get("tools", [])}
    return {t["function"]["name"]: t["function"]["parameters"] for t in body.get("tools", [])}


def tool_results(provider: str, body: dict[str, Any]) -> list[tuple[str, bool]]:
    """(text, is_error) of the tool results in the last message(s) of a request."""
    if provider == "anthropic":
        last = body["messages"][-1]["content"]
        return [(" ".join(c.get("text", "") for c in r["content"]), r["is_error"]) for r in last]
    out = []
    for m in reversed(body["messages"]):
        if m["role"] != "tool":
            if m["role"] == "user" and isinstance(m["content"], list):
                continue  # images of the tool results follow them as a user message
            break
        out.append((m["content"], m["content"].startswith("ERROR: ")))
    return list(reversed(out))


def system_prompt(provider: str, body: dict[str, Any]) -> str:
    if provider == "anthropic":
        return str(body.get("system") or "")
    first = body["messages"][0]
    return str(first["content"]) if first["role"] == "system" else ""


def images(provider: str, body: dict[str, Any]) -> list[str]:
    """The base64 data of every image in the last messages of a request."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "base64" and "data" in node:
                found.append(node["data"])
            url = node.get("url")
            if isinstance(url, str) and url.startswith("data:image"):
                found.append(url.split(",", 1)[1])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(body["messages"])
    return found
