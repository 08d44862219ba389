"""stdio transport with a real subprocess (TR-STDIO-*)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from support import ROOT, record, rpc, scaled


class Proc:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.methods: dict[Any, str] = {}

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        if isinstance(message, dict):
            if "id" in message:
                self.methods[message["id"]] = message["method"]
            data = orjson.dumps(message)
        else:
            data = message
        self.proc.stdin.write(data + b"\n")

    async def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), scaled(10))
        assert line, "server closed stdout"
        msg = orjson.loads(line)  # TR-STDIO-01/04: every line is one JSON message
        record(self.methods.get(msg.get("id"), "notification"), msg)
        return msg  # type: ignore[no-any-return]


@pytest.fixture
async def proc() -> AsyncIterator[Proc]:
    p = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "tests/servers/basic_server.py"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    yield Proc(p)
    if p.returncode is None:
        p.kill()
        await p.wait()


async def test_call_and_discover(proc: Proc) -> None:
    proc.send(rpc("server/discover", id=1))
    assert (await proc.read())["result"]["supportedVersions"][0] == "2026-07-28"
    proc.send(rpc("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, id=2))
    assert (await proc.read())["result"]["content"][0]["text"] == "hi"


async def test_prints_never_reach_stdout(proc: Proc) -> None:
    proc.send(rpc("tools/call", {"name": "noisy"}, id=1))
    msg = await proc.read()
    assert msg["result"]["content"][0]["text"] == "quiet"


async def test_concurrent_requests_and_cancellation(proc: Proc) -> None:
    proc.send(rpc("tools/call", {"name": "slow"}, id="s", progressToken="p"))
    progress = await proc.read()
    assert progress["method"] == "notifications/progress"  # the slow call is running
    proc.send(rpc("tools/call", {"name": "echo", "arguments": {"text": "meanwhile"}}, id=2))
    assert (await proc.read())["id"] == 2  # answered while "s" is still in flight
    proc.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "s"}})
    assert proc.proc.stderr is not None
    line = await asyncio.wait_for(proc.proc.stderr.readline(), scaled(10))
    assert b"slow: cancelled" in line
    proc.send(rpc("tools/call", {"name": "echo", "arguments": {"text": "after"}}, id=3))
    msg = await proc.read()
    assert msg["id"] == 3  # TR-STDIO-10: nothing was sent for "s"


async def test_bad_input_keeps_serving(proc: Proc) -> None:
    proc.send(b'{"jsonrpc": "2.0", "id": 1, "method"')
    err = await proc.read()
    assert err["error"]["code"] == -32700 and "id" not in err
    proc.send(b"[1, 2]")
    assert (await proc.read())["error"]["code"] == -32600
    proc.send({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    err = await proc.read()
    assert err["id"] == 5 and err["error"]["code"] == -32602
    proc.send(rpc("nope/nope", id=6))
    assert (await proc.read())["error"]["code"] == -32601
    proc.send(rpc("tools/list", id=7))
    assert (await proc.read())["result"]["tools"]


async def test_listen_on_stdio(proc: Proc) -> None:
    proc.send(rpc("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id="L"))
    ack = await proc.read()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    proc.send(rpc("tools/call", {"name": "change"}, id=2))
    msgs = [await proc.read(), await proc.read()]
    note = next(m for m in msgs if m.get("method") == "notifications/tools/list_changed")
    assert note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L"  # TR-STDIO-08
    proc.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "L"}})
    proc.send(rpc("tools/call", {"name": "change"}, id=3))
    assert (await proc.read())["id"] == 3  # the cancelled subscription got nothing


async def test_exits_on_eof(proc: Proc) -> None:
    assert proc.proc.stdin is not None
    proc.send(rpc("tools/call", {"name": "echo", "arguments": {"text": "last"}}, id=1))
    proc.proc.stdin.close()
    assert (await proc.read())["result"]["content"][0]["text"] == "last"
    assert await asyncio.wait_for(proc.proc.wait(), scaled(10)) == 0  # TR-STDIO-12


def test_regular_files_as_stdin_and_stdout(tmp_path: Any) -> None:
    """`server < requests.jsonl > answers.jsonl` works (the loop cannot watch regular files)."""
    import subprocess

    requests = tmp_path / "in.jsonl"
    answers = tmp_path / "out.jsonl"
    requests.write_bytes(
        orjson.dumps(rpc("tools/call", {"name": "echo", "arguments": {"text": "file"}})) + b"\n"
    )
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        rc = subprocess.run(
            [sys.executable, str(ROOT / "tests/servers/basic_server.py")],
            stdin=stdin,
            stdout=stdout,
            timeout=scaled(30),
        ).returncode
    assert rc == 0
    (line,) = answers.read_bytes().splitlines()
    msg = orjson.loads(line)
    record("tools/call", msg)
    assert msg["result"]["content"][0]["text"] == "file"
