"""A 2025-11-25 session on stdio: `initialize` turns the process legacy (VER-14), the same
tools ask real questions over the pipe, and modern requests still work beside it (VER-15)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from legacy_support import V25, init_message, record
from support import ROOT, rpc, scaled


class Pipe:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.methods: dict[Any, str] = {}

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        if "id" in message and "method" in message:
            self.methods[message["id"]] = message["method"]
        self.proc.stdin.write(orjson.dumps(message) + b"\n")

    async def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), scaled(10))
        assert line, "server closed stdout"
        msg: dict[str, Any] = orjson.loads(line)  # TR-STDIO-01: one message per line
        return msg


@pytest.fixture
async def pipe() -> AsyncIterator[Pipe]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "tests/conformance/everything_server.py"),
        "--stdio",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    yield Pipe(proc)
    if proc.returncode is None:
        proc.kill()
        await proc.wait()


async def legacy_read(pipe: Pipe) -> dict[str, Any]:
    msg = await pipe.read()
    record(msg["method"] if "method" in msg else pipe.methods.get(msg.get("id"), "?"), msg)
    return msg


async def test_stdio_session(pipe: Pipe) -> None:
    pipe.send(init_message({"elicitation": {}}, id=1))
    result = (await legacy_read(pipe))["result"]
    assert result["protocolVersion"] == V25 and "logging" in result["capabilities"]
    pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert (await legacy_read(pipe)) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    # The elicitation is a real request on stdout; the answer is a response on stdin.
    pipe.send(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "test_input_required_result_elicitation", "arguments": {}},
        }
    )
    question = await legacy_read(pipe)
    assert question["method"] == "elicitation/create" and "id" in question
    pipe.send(
        {
            "jsonrpc": "2.0",
            "id": question["id"],
            "result": {"action": "accept", "content": {"name": "Ann"}},
        }
    )
    reply = await legacy_read(pipe)
    assert reply["id"] == 3 and reply["result"]["content"][0]["text"] == "Hello, Ann!"
    assert "resultType" not in reply["result"]
    # A modern request in the same process is served statelessly (with resultType).
    pipe.send(rpc("tools/call", {"name": "test_simple_text"}, id=4))
    modern = await pipe.read()
    assert modern["id"] == 4 and modern["result"]["resultType"] == "complete"
    # Changes reach the session as notifications on stdout.
    pipe.send(
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "test_trigger_tool_change"},
        }
    )
    seen = {
        m.get("method") or m.get("id") for m in [await legacy_read(pipe), await legacy_read(pipe)]
    }
    assert seen == {"notifications/tools/list_changed", 5}
    pipe.send(
        {"jsonrpc": "2.0", "id": 6, "method": "resources/read", "params": {"uri": "test://x"}}
    )
    assert (await legacy_read(pipe))["error"]["code"] == -32002
    assert pipe.proc.stdin is not None
    pipe.proc.stdin.close()  # TR-STDIO-12: EOF ends the process and its session
    assert await asyncio.wait_for(pipe.proc.wait(), scaled(10)) == 0


async def test_rejected_initialize_leaves_the_process_modern(pipe: Pipe) -> None:
    pipe.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert (await pipe.read())["error"]["code"] == -32602
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert (await pipe.read())["error"]["code"] == -32602  # no session: _meta is required
    pipe.send(init_message(id=3))
    assert (await pipe.read())["result"]["protocolVersion"] == V25
