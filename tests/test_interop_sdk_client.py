"""Interop: the official MCP Python SDK's client (an `mcp` 1.x release, a 2025-11-25 client)
drives mcpkit's dual-era server over stdio and Streamable HTTP. Its elicitation is answered
through a real server→client request, by the same tool code the modern MRTR test below drives.

The SDK lives in its own venv under the repository's .cache/interop/ (or MCPKIT_INTEROP_SDK1_PY=python
of a venv that has it), created once from PyPI with pip and reused.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import interop_support
from support import ROOT, AsgiClient, free_port, rpc, scaled, wait_port

SDK_VERSION = "1.30.0"  # the last 1.x line: a 2025-11-25 client
CLIENT = ROOT / "tests/interop/sdk_client.py"
FIXTURE = ROOT / "tests/conformance/everything_server.py"


@pytest.fixture(scope="module")
def sdk1_python() -> Path:
    return interop_support.sdk_python(SDK_VERSION, override_env="MCPKIT_INTEROP_SDK1_PY")


async def run_client(python: Path, *args: str) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        str(python),
        str(CLIENT),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), scaled(90))
    assert proc.returncode == 0, err.decode()[-3000:]
    seen: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return seen


def check(seen: dict[str, Any]) -> None:
    assert seen["protocolVersion"] == "2025-11-25"
    assert seen["serverName"] == "mcpkit-everything-server"
    assert "test_input_required_result_elicitation" in seen["tools"]
    assert seen["elicited"] == ["What is your name?"]  # a real elicitation/create
    assert seen["elicitation"] == "Hello, Ann!"
    assert seen["sampling"] == "LLM response: Paris"
    assert seen["progress"] == [0, 50, 100]
    assert seen["logs"] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert seen["resource"] == "This is the content of the static text resource."
    assert seen["missingResourceCode"] == -32002
    assert "arg1='a'" in seen["prompt"]


async def test_official_sdk_client_over_stdio(sdk1_python: Path) -> None:
    check(await run_client(sdk1_python, "stdio", sys.executable, str(FIXTURE)))


async def test_official_sdk_client_over_http(sdk1_python: Path) -> None:
    port = free_port()
    server = await asyncio.create_subprocess_exec(
        sys.executable, str(FIXTURE), "--port", str(port), stderr=asyncio.subprocess.DEVNULL
    )
    try:
        await wait_port(port, server)
        check(await run_client(sdk1_python, "http", f"http://127.0.0.1:{port}/mcp"))
    finally:
        server.terminate()
        await asyncio.wait_for(server.wait(), scaled(10))


async def test_the_same_tool_on_the_modern_wire(everything: Any) -> None:
    """The tool the SDK client answered above, on 2026-07-28: an input_required round instead."""
    http = AsgiClient(everything.http_app())
    caps = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    first = await http.post(
        rpc("tools/call", {"name": "test_input_required_result_elicitation"}, **caps)
    )
    asked = first.result["inputRequests"]["user_name"]
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["message"] == "What is your name?"
    retry = rpc(
        "tools/call",
        {
            "name": "test_input_required_result_elicitation",
            "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ann"}}},
            "requestState": first.result["requestState"],
        },
        id=2,
        **caps,
    )
    done = await http.post(retry)
    assert done.result["content"][0]["text"] == "Hello, Ann!"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_mcpkit_client_in_legacy_mode(transport: str) -> None:
    """Our own client, forced to the 2025-11-25 wire, against our dual-era server."""
    from mcpkit.client import Client
    from mcpkit.client.inputs import Elicitation

    async def answer(request: Elicitation) -> dict[str, Any]:
        assert request.message == "What is your name?"
        return {"action": "accept", "content": {"name": "Ann"}}

    server = None
    if transport == "stdio":
        target: Any = [sys.executable, str(FIXTURE), "--stdio"]
    else:
        port = free_port()
        server = await asyncio.create_subprocess_exec(
            sys.executable, str(FIXTURE), "--port", str(port), stderr=asyncio.subprocess.DEVNULL
        )

        await wait_port(port, server)
        target = f"http://127.0.0.1:{port}/mcp"
    try:
        async with Client(target, era="legacy", elicitation=answer, stderr="discard") as client:  # type: ignore[arg-type]
            assert client.era == "legacy"
            result = await client.call_tool("test_input_required_result_elicitation", {})
            assert result.text == "Hello, Ann!"
            assert (await client.call_tool("test_simple_text", {})).text.startswith("This is")
    finally:
        if server is not None:
            server.terminate()
            await asyncio.wait_for(server.wait(), scaled(10))
