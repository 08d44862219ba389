"""Interop: the mcpkit client against the official SDK server (`mcp==2.3.0`, its MCPServer),
in both eras, over stdio and HTTP. The SDK runs from its own venv, made here once and reused
(.cache/interop in the repository, or MCPKIT_INTEROP_SDK_PY=/path/to/python)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

import interop_support
from mcpkit.client import Client
from mcpkit.client.inputs import Elicitation
from support import ROOT, free_port, wait_port

SDK_VERSION = "2.3.0"
SERVER = ROOT / "tests/interop/sdk_server.py"


@pytest.fixture(scope="session")
def sdk_python() -> str:
    return str(
        interop_support.sdk_python(SDK_VERSION, "uvicorn", override_env="MCPKIT_INTEROP_SDK_PY")
    )


@pytest.fixture
async def sdk_http(sdk_python: str) -> AsyncIterator[str]:
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sdk_python, str(SERVER), "http", str(port), stderr=asyncio.subprocess.DEVNULL
    )
    await wait_port(port, proc)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    await proc.wait()


async def answer_name(request: Elicitation) -> dict[str, Any]:
    assert request.message == "What is your name?"
    assert "name" in (request.requested_schema or {}).get("properties", {})
    return {"action": "accept", "content": {"name": "Ada"}}


async def exercise(target: Any, era: str) -> None:
    async with Client(target, era=era, elicitation=answer_name, stderr="discard") as client:  # type: ignore[arg-type]
        assert client.era == era
        assert client.info is not None and client.info.name == "sdk-interop"
        assert [t.name for t in await client.list_tools()] == ["add", "greet"]
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.text == "5" and not result.is_error
        assert (await client.read_resource("interop://note")).text == "interop note"
        prompt = await client.get_prompt("review", {"code": "x = 1"})
        assert "x = 1" in prompt.messages[0]["content"]["text"]
        # One elicitation round: MRTR on 2026-07-28, a real server→client request on legacy.
        assert (await client.call_tool("greet", {})).text == "Hello, Ada!"


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_sdk_over_http(sdk_http: str, era: str) -> None:
    await exercise(sdk_http, era)


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_sdk_over_stdio(sdk_python: str, era: str) -> None:
    await exercise([sdk_python, str(SERVER), "stdio"], era)


async def test_era_detection_finds_modern(sdk_http: str) -> None:
    async with Client(sdk_http) as client:
        assert client.era == "modern"  # the SDK 2.3.0 server is dual-era; modern wins (VER-10)
