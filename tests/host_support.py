"""What the host's end-to-end tests share: the Northwind servers as real processes, a recording
user, and loopback model APIs that the real `anthropic` / `openai` SDKs talk to."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from aiohttp import web

from mcpkit.client.inputs import Elicitation
from mcpkit.host import Decision, Host, HostConfig, HostSettings, PendingCall, parse_config
from mcpkit.host.backoff import Backoff
from mcpkit.host.conversation import AssistantMessage, Message, ToolCall, ToolResult, ToolSpec
from mcpkit.host.models.scripted import ScriptedModel
from mcpkit.host.supervision import StateChange
from mcpkit.host.ui import Answer
from prompt_cache import PromptCache
from support import ROOT, free_port, wait_port

NORTHWIND = ROOT / "examples/northwind"
SERVERS = ROOT / "tests/servers"


async def start_http(argv: Sequence[str], port: int) -> asyncio.subprocess.Process:
    """`python *argv PORT`, once it listens."""
    proc = await asyncio.create_subprocess_exec(sys.executable, *argv, str(port))
    try:
        await wait_port(port, proc)
    except BaseException:
        await stop(proc)
        raise
    return proc


async def stop(*procs: asyncio.subprocess.Process) -> None:
    for proc in procs:
        if proc.returncode is None:
            proc.terminate()
    await asyncio.gather(*(p.wait() for p in procs))


WAREHOUSE = (str(NORTHWIND / "warehouse_server.py"),)


@contextlib.asynccontextmanager
async def northwind_http(warehouse: Sequence[str] = WAREHOUSE) -> AsyncIterator[dict[str, str]]:
    """The warehouse (`python *warehouse PORT`) and returns servers over HTTP; yields the
    environment the Northwind configs expand."""
    ports = {"WAREHOUSE_PORT": free_port(), "RETURNS_PORT": free_port()}
    procs: list[asyncio.subprocess.Process] = []
    try:  # a server that fails to start must not leave the other one running
        procs.append(await start_http(warehouse, ports["WAREHOUSE_PORT"]))
        procs.append(
            await start_http([str(NORTHWIND / "returns_server.py")], ports["RETURNS_PORT"])
        )
        yield {"PYTHON": sys.executable, **{k: str(v) for k, v in ports.items()}}
    finally:
        await stop(*procs)


def child_pids(marker: str, parent: int | None = None) -> list[int]:
    """The children of `parent` (default: this process) whose command line contains
    `marker` (Linux /proc)."""
    parent = os.getpid() if parent is None else parent
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and marker in cmdline:
            found.append(int(entry.name))
    return found


class RecordingUI:
    """A non-interactive user: records everything; allows all but cancellations, or answers
    from `answers` (tool name → yes, no or "session")."""

    def __init__(self, answers: dict[str, Answer] | None = None) -> None:
        self.events: list[tuple[str, Any]] = []
        self.answers = answers or {}

    def user(self, text: str) -> None:
        self.events.append(("user", text))

    def assistant(self, text: str) -> None:
        self.events.append(("assistant", text))

    def tool_call(self, call: PendingCall, decision: Decision) -> None:
        self.events.append(("call", (call.alias, decision)))

    async def confirm(self, call: PendingCall) -> Answer:
        self.events.append(("confirm", call.alias))
        return self.answers.get(call.tool, not call.tool.startswith("cancel"))

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

    def server_state(self, change: StateChange) -> None:
        self.events.append(("state", (change.server, change.state.value)))

    def warn(self, text: str) -> None:
        self.events.append(("warn", text))

    def info(self, text: str) -> None:
        self.events.append(("info", text))

    def of(self, kind: str) -> list[Any]:
        return [value for k, value in self.events if k == kind]


Reply = Callable[[dict[str, Any]], dict[str, Any] | web.Response | Awaitable[dict[str, Any]]]


def api_error(status: int, message: str = "slow down") -> web.Response:
    """An API error both SDKs parse, marked not to be retried (`x-should-retry: false`)."""
    body = {"type": "error", "error": {"type": "api_error", "message": message}}
    return web.json_response(body, status=status, headers={"x-should-retry": "false"})


class FakeAPI:
    """A loopback model API: records each request body, answers with the next scripted reply
    (a function of the body; async ones may wait for the host to reach some state first).
    With a `cache` (Anthropic's), each answer's usage is the prompt cache's account of the
    request (tests/prompt_cache.py)."""

    def __init__(self, path: str, replies: list[Reply], cache: PromptCache | None = None) -> None:
        self.path = path
        self.replies = replies
        self.cache = cache
        self.requests: list[dict[str, Any]] = []
        #: Each request's path, query and headers, in the order of `requests`.
        self.seen: list[tuple[str, dict[str, str], dict[str, str]]] = []
        self.runner: web.AppRunner | None = None
        self.url = ""
        #: SDK clients made for this API (`make_model`), closed with it on their own loop: one
        #: left to the GC runs its aclose() on a later test's loop, fails and logs there.
        self.clients: list[Any] = []

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        self.seen.append((request.path, dict(request.query), dict(request.headers)))
        reply = self.replies[len(self.requests) - 1](body)
        if inspect.isawaitable(reply):
            reply = await reply
        if self.cache is not None and isinstance(reply, dict):
            try:
                reply = {**reply, "usage": {**reply["usage"], **self.cache.usage(body)}}
            except ValueError as exc:
                return api_error(400, str(exc))
        return reply if isinstance(reply, web.Response) else web.json_response(reply)

    async def __aenter__(self) -> FakeAPI:
        app = web.Application(client_max_size=64 * 1024 * 1024)  # results with images
        app.router.add_post(self.path, self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        port = free_port()
        await web.TCPSite(self.runner, "127.0.0.1", port).start()
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self.runner is not None
        for client in self.clients:
            await client.close()
        await self.runner.cleanup()


Step = list[tuple[str, dict[str, Any]]] | str


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


def make_model(provider: str, api: FakeAPI) -> Any:
    """The host's adapter for `provider`, on the real SDK, pointed at the fake API."""
    if provider == "anthropic":
        import anthropic

        from mcpkit.host.models.anthropic import AnthropicModel

        client: Any = anthropic.AsyncAnthropic(api_key="test", base_url=api.url)
        api.clients.append(client)
        return AnthropicModel("fake", client=client)
    import openai

    from mcpkit.host.models.openai import OpenAIModel

    client = openai.AsyncOpenAI(api_key="test", base_url=api.url + "/v1")
    api.clients.append(client)
    return OpenAIModel("fake", client=client)


def api_path(provider: str) -> str:
    return "/v1/messages" if provider == "anthropic" else "/v1/chat/completions"


def tool_names(provider: str, body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    if provider == "anthropic":
        return {t["name"]: t["input_schema"] for t in body.get("tools", [])}
    return {t["function"]["name"]: t["function"]["parameters"] for t in body.get("tools", [])}


def system_text(provider: str, body: dict[str, Any]) -> str:
    if provider == "anthropic":  # a string, or text blocks (marked for the prompt cache)
        system = body.get("system", "")
        return system if isinstance(system, str) else "".join(b["text"] for b in system)
    first = body["messages"][0]
    return str(first["content"]) if first["role"] == "system" else ""


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


# -- the docs' example config, as the runtime tests use it ----------------------------------
EXAMPLE = NORTHWIND / "host.json"  # docs/host-runtime.md's "Running a host for real" config
FAULTS = str(SERVERS / "northwind_faults.py")


def example_config(env: dict[str, str], **servers: dict[str, Any]) -> HostConfig:
    """The docs' example config; `servers` entries are merged into (or added to) it."""
    data = json.loads(EXAMPLE.read_text())
    for name, entry in servers.items():
        data["mcpServers"][name] = {**data["mcpServers"].get(name, {}), **entry}
    return parse_config(data, source=str(EXAMPLE), env=env)


def settings_for(cfg: HostConfig, tmp_path: Path, **changes: Any) -> HostSettings:
    """The example's host settings, with files in `tmp_path` and a quick restart backoff. No
    pin file unless `pins=` names one: a first run's servers are new, and the quarantine would
    withhold all their tools until approved (tests/test_host_quarantine.py)."""
    settings = HostSettings.from_config(cfg)
    changes = {"pins": None, **changes}
    return replace(
        settings,
        restart=Backoff(initial=0.05, factor=2, cap=0.2, jitter=0),
        audit=tmp_path / "audit.jsonl",
        log=tmp_path / "host.log",
        **changes,
    )


def host_for(
    cfg: HostConfig, api: FakeAPI, ui: RecordingUI, tmp_path: Path, **options: Any
) -> Host:
    """A host on the fake API's model, with the example's settings (files in `tmp_path`)."""
    provider = "anthropic" if api.path == api_path("anthropic") else "openai"
    settings = options.pop("settings", None) or settings_for(cfg, tmp_path)
    return Host(cfg, model=make_model(provider, api), ui=ui, settings=settings, **options)


def web_for(cfg: HostConfig, api: FakeAPI, tmp_path: Path, **options: Any) -> Any:
    """The web UI's host on the fake API's model, with the example's settings."""
    from mcpkit.host.web import WebHost

    provider = "anthropic" if api.path == api_path("anthropic") else "openai"
    settings = options.pop("settings", None) or settings_for(cfg, tmp_path)
    return WebHost(cfg, model=make_model(provider, api), settings=settings, **options)


def script(provider: str, *steps: Step | Reply) -> list[Reply]:
    """Model replies: a step (tool calls or a final text) or a function of the request."""
    make = anthropic_reply if provider == "anthropic" else openai_reply
    return [
        step if callable(step) else (lambda body, s=step, n=n: make(s, n))
        for n, step in enumerate(steps)
    ]


# -- the context-budget tests ----------------------------------------------------------------
PROVIDERS = ["anthropic", "openai"]


def scripted(provider: str, steps: list[Step | Callable[[dict[str, Any]], Step]]) -> list[Reply]:
    """Model replies: a step, or a function of the request body that returns the step."""
    make = anthropic_reply if provider == "anthropic" else openai_reply

    def reply(step: Any, n: int) -> Reply:
        return lambda body: make(step(body) if callable(step) else step, n)

    return [reply(step, n) for n, step in enumerate(steps)]


def images(provider: str, body: dict[str, Any]) -> list[str]:
    """The base64 data of every image in the messages of a request."""
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


def calls_then_done(*calls: tuple[str, dict[str, Any]]) -> ScriptedModel:
    """A model that makes these tool calls in its first round, then answers "done"."""

    def call(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return AssistantMessage("", [ToolCall(f"c{i}", n, a) for i, (n, a) in enumerate(calls)])

    def done(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return AssistantMessage("done")

    return ScriptedModel([call, done])
