"""`on_call` against a real Streamable HTTP server: per-user `_meta`, a header and a host-owned
argument reach the server; reserved `_meta` keys and mirrored headers are refused (BASE-40..44,
TR-HDR-12) before anything is sent."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from host_support import RecordingUI, free_port, wait_port
from mcpkit.host import CallExtras, CallInfo, Host, parse_config
from mcpkit.host.conversation import AssistantMessage, Message, ToolCall, ToolResults, ToolSpec
from mcpkit.host.hooks import header_problem, meta_key_problem
from mcpkit.host.models.scripted import ScriptedModel
from support import ROOT


@pytest.fixture
async def http_server() -> AsyncIterator[str]:
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "tests/servers/context_server.py"), "docs", "--http", str(port)
    )
    await wait_port(port, proc)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    await proc.wait()


def calls(*names: str) -> ScriptedModel:
    def call(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return AssistantMessage("", [ToolCall(f"c{i}", n, {}) for i, n in enumerate(names)])

    def done(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return AssistantMessage("done")

    return ScriptedModel([call, done])


def results(history: list[Message]) -> list[tuple[str, bool]]:
    last = next(m for m in reversed(history) if isinstance(m, ToolResults))
    return [(" ".join(b.get("text", "") for b in r.content), r.is_error) for r in last.results]


async def run(url: str, hook: Any, *tools: str) -> tuple[list[tuple[str, bool]], RecordingUI]:
    cfg = parse_config(
        {"mcpServers": {"docs": {"url": url, "trusted": True, "hostOwned": ["customer_id"]}}}
    )
    ui = RecordingUI()
    async with Host(cfg, model=calls(*tools), ui=ui, on_call=hook) as host:
        agent = host.agent()
        await agent.ask("who am I?")
        return results(agent.history), ui


async def test_per_user_meta_header_and_argument_reach_the_server(http_server: str) -> None:
    seen: list[CallInfo] = []

    async def per_user(call: CallInfo) -> CallExtras:
        seen.append(call)
        return CallExtras(
            meta={"com.example/user": "ann"},
            headers={"X-Tenant": "acme"},
            arguments={"customer_id": "C-9"} if call.tool == "lookup_account" else {},
        )

    (who, err1), (account, err2) = (
        await run(http_server, per_user, "docs__whoami", "docs__lookup_account")
    )[0]
    assert not err1 and json.loads(who) == {"user": "ann", "tenant": "acme"}
    assert not err2 and account == "account of C-9"
    assert {c.alias for c in seen} == {"docs__whoami", "docs__lookup_account"}


@pytest.mark.parametrize(
    ("extras", "why"),
    [
        (CallExtras(meta={"io.modelcontextprotocol/protocolVersion": "1999"}), "BASE-43"),
        (CallExtras(meta={"progressToken": "x"}), "BASE-40"),
        (CallExtras(headers={"Mcp-Name": "other_tool"}), "TR-HDR-12"),
        (CallExtras(headers={"mcp-param-region": "x"}), "TR-HDR-12"),
        (CallExtras(arguments={"text": "not host-owned"}), "hostOwned"),
    ],
)
async def test_reserved_keys_are_refused(http_server: str, extras: CallExtras, why: str) -> None:
    ((result, is_error),) = (await run(http_server, lambda call: extras, "docs__whoami"))[0]
    assert is_error and "The host refused this call" in result and why in result


def test_meta_key_rules() -> None:
    assert meta_key_problem("com.example/user") is None
    assert meta_key_problem("user") is None
    assert "BASE-43" in (meta_key_problem("dev.mcp/x") or "")
    assert "BASE-41" in (meta_key_problem("1com/x") or "")
    assert "BASE-44" in (meta_key_problem("com.example/-x") or "")
    assert header_problem("X-Tenant", "acme") is None
    assert header_problem("authorization", "Bearer x")  # the connection's own credentials
    assert header_problem("X-Bad", "a\r\nInjected: 1")
