"""Real processes, as a user runs them: `mcpkit run` says where it serves, `--reload` restarts on a
change, and Ctrl-C (SIGINT) ends `mcpkit run`, `mcpkit call` and a `server.run()` script with
status 130 and no traceback."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from support import (
    LEGACY_HEADERS,
    ROOT,
    default_sigint,
    free_port,
    headers_for,
    legacy_initialize,
    rpc,
    scaled,
    wait_port,
)

pytestmark = pytest.mark.timing

SERVER = str(ROOT / "tests/servers/cli_server.py")
MCPKIT = [sys.executable, "-m", "mcpkit"]


class Proc:
    """A child whose stderr is read line by line (its lines are the readiness events)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []

    @classmethod
    async def start(cls, *argv: str, env: dict[str, str] | None = None) -> Proc:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            preexec_fn=default_sigint,
            env={**os.environ, **(env or {})},
        )
        return cls(proc)

    async def line_with(self, text: str, seconds: float = 30) -> str:
        assert self.proc.stderr is not None
        async with asyncio.timeout(scaled(seconds)):
            while True:
                raw = await self.proc.stderr.readline()
                if not raw:
                    raise AssertionError(f"stderr ended before {text!r}: {self.lines}")
                line = raw.decode().rstrip("\n")
                self.lines.append(line)
                if text in line:
                    return line

    async def interrupt(self, again: bool = True) -> tuple[int, str]:
        """SIGINT, as Ctrl-C sends it (unless `again` is False: one was sent already); the
        exit status and the rest of stderr."""
        if again:
            self.proc.send_signal(signal.SIGINT)
        assert self.proc.stderr is not None
        rest = await asyncio.wait_for(self.proc.stderr.read(), scaled(30))
        code = await asyncio.wait_for(self.proc.wait(), scaled(30))
        return code, "\n".join(self.lines) + "\n" + rest.decode()


async def test_run_http_prints_its_url_and_stops_on_ctrl_c() -> None:
    port = free_port()
    proc = await Proc.start(*MCPKIT, "run", SERVER, "--transport", "http", "--port", str(port))
    line = await proc.line_with("serving")
    assert line == (
        f"mcpkit: serving cli-test 0.1 (3 tools) at http://127.0.0.1:{port}/mcp (Ctrl-C to stop)"
    )
    await wait_port(port, proc.proc)
    code, err = await proc.interrupt()
    assert code == 130 and "Traceback" not in err, err


async def test_run_stdio_stops_on_ctrl_c() -> None:
    proc = await Proc.start(*MCPKIT, "run", SERVER)
    assert await proc.line_with("serving") == "mcpkit: serving cli-test 0.1 (3 tools) over stdio"
    code, err = await proc.interrupt()
    assert code == 130 and "Traceback" not in err, err


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_server_run_script_stops_on_ctrl_c(transport: str) -> None:
    port = free_port()
    args = ["http", str(port)] if transport == "http" else []
    proc = await Proc.start(sys.executable, SERVER, *args)
    if transport == "http":
        await wait_port(port, proc.proc)
    else:  # ready once it answers a request
        assert proc.proc.stdin is not None and proc.proc.stdout is not None
        proc.proc.stdin.write(
            b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":'
            b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}\n'
        )
        await proc.proc.stdin.drain()
        assert b'"id":1' in await asyncio.wait_for(proc.proc.stdout.readline(), scaled(30))
    code, err = await proc.interrupt()
    assert code == 130 and "Traceback" not in err and "KeyboardInterrupt" not in err, err


async def test_call_stops_on_ctrl_c() -> None:
    proc = await Proc.start(*MCPKIT, "call", SERVER, "wait")
    await proc.line_with("progress 1/2 waiting")  # the tool is running
    code, err = await proc.interrupt()
    assert code == 130 and "Traceback" not in err, err


TOOL = """
@server.tool()
def {name}() -> str:
    return "{name}"
"""


async def test_reload_restarts_when_the_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "dev_server.py"
    path.write_text("from mcpkit import Server\nserver = Server('dev')\n" + TOOL.format(name="a"))
    port = free_port()
    proc = await Proc.start(
        *MCPKIT, "run", str(path), "-T", "http", "--port", str(port), "--reload"
    )
    assert "(1 tool)" in await proc.line_with("serving")
    await wait_port(port, proc.proc)
    path.write_text(path.read_text() + TOOL.format(name="b"))
    assert "dev_server.py changed; restarting" in await proc.line_with("restarting")
    assert "(2 tools)" in await proc.line_with("serving")
    code, err = await proc.interrupt()
    assert code == 130 and "Traceback" not in err, err


# -- stopping a busy server ------------------------------------------------------------------


async def _http_server(drain_timeout: float) -> tuple[Proc, int]:
    port = free_port()
    proc = await Proc.start(
        *MCPKIT, "run", SERVER, "-T", "http", "--port", str(port),
        env={"MCPKIT_DRAIN_TIMEOUT": str(drain_timeout)},
    )  # fmt: skip
    await proc.line_with("serving")
    await wait_port(port, proc.proc)
    return proc, port


async def _call_in_flight(s: aiohttp.ClientSession, port: int, era: str) -> aiohttp.ClientResponse:
    """`wait` called and running (its progress notification read): the response, open."""
    url = f"http://127.0.0.1:{port}/mcp"
    headers = dict(LEGACY_HEADERS)
    if era == "2025-11-25":
        async with s.post(url, data=orjson.dumps(legacy_initialize()), headers=headers) as r:
            headers["mcp-session-id"] = r.headers["mcp-session-id"]
        headers["mcp-protocol-version"] = era
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        async with s.post(url, data=orjson.dumps(note), headers=headers) as r:
            assert r.status == 202
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        call["params"] = {"name": "wait", "arguments": {}, "_meta": {"progressToken": 1}}
    else:
        call = rpc("tools/call", {"name": "wait", "arguments": {}}, progressToken=1)
        headers = headers_for(call)
        headers.pop("host")
    response = await s.post(url, data=orjson.dumps(call), headers=headers)
    assert response.status == 200
    while True:  # a 2025-11-25 stream starts with a priming event (no data)
        event = await asyncio.wait_for(response.content.readuntil(b"\n\n"), scaled(30))
        data = event.split(b"data:", 1)[1].strip() if b"data:" in event else b""
        if data:
            assert orjson.loads(data)["method"] == "notifications/progress"
            return response


async def _answer(response: aiohttp.ClientResponse) -> dict[str, Any]:
    """The rest of the SSE stream: the one JSON-RPC response on it."""
    rest = await asyncio.wait_for(response.content.read(), scaled(30))
    data = [e.split(b"data:", 1)[1].strip() for e in rest.split(b"\n\n") if b"data:" in e]
    messages = [orjson.loads(d) for d in data if d]
    return [m for m in messages if "id" in m][-1]


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_ctrl_c_drains_calls_in_flight_and_answers_the_rest(era: str) -> None:
    proc, port = await _http_server(drain_timeout=1)
    async with aiohttp.ClientSession() as s:
        response = await _call_in_flight(s, port, era)
        listen = rpc("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=7)
        headers = headers_for(listen)
        headers.pop("host")
        url = f"http://127.0.0.1:{port}/mcp"
        stream = await s.post(url, data=orjson.dumps(listen), headers=headers)
        assert b"acknowledged" in await stream.content.readuntil(b"\n\n")
        proc.proc.send_signal(signal.SIGINT)
        line = await proc.line_with("draining")
        assert line == (
            "mcpkit: draining, 1 call in flight (up to 1 s); press Ctrl-C again to stop now"
        )
        assert (await _answer(stream))["id"] == 7  # the listen stream ends with its result
        answer = await _answer(response)  # a JSON-RPC error, not an HTTP 500
        assert answer["id"] == 1 and answer["error"]["code"] == -32603
        assert "drain timeout 1 s" in answer["error"]["message"]
    code, err = await proc.interrupt(again=False)
    assert code == 130 and "Traceback" not in err and "Exception" not in err, err
    assert err.count("draining") == 1, err


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_a_second_ctrl_c_stops_at_once(era: str) -> None:
    proc, port = await _http_server(drain_timeout=60)
    async with aiohttp.ClientSession() as s:
        response = await _call_in_flight(s, port, era)
        proc.proc.send_signal(signal.SIGINT)
        await proc.line_with("draining")
        loop = asyncio.get_running_loop()
        began = loop.time()
        code, err = await proc.interrupt()
        assert code == 130 and loop.time() - began < scaled(10), err
        assert "Traceback" not in err and "Exception" not in err, err
        answer = await _answer(response)
        assert answer["error"]["message"] == "The server was stopped (Ctrl-C) during this call"


SYNC_SERVER = """
import time
from mcpkit import Server

server = Server("sync")

@server.tool()
def block(seconds: float) -> str:
    time.sleep(seconds)
    return "done"
"""


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_stdio_ctrl_c_with_calls_in_flight_has_no_traceback(tmp_path: Path, era: str) -> None:
    path = tmp_path / "sync_server.py"
    path.write_text(SYNC_SERVER)
    proc = await Proc.start(*MCPKIT, "run", str(path))
    await proc.line_with("serving")
    stdin, stdout = proc.proc.stdin, proc.proc.stdout
    assert stdin is not None and stdout is not None
    if era == "2025-11-25":
        stdin.write(orjson.dumps(legacy_initialize()) + b"\n")
        await stdin.drain()
        assert b'"id":0' in await asyncio.wait_for(stdout.readline(), scaled(30))
        stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        call["params"] = {"name": "block", "arguments": {"seconds": 30}}
        slow = orjson.dumps(call)
    else:
        slow = orjson.dumps(rpc("tools/call", {"name": "block", "arguments": {"seconds": 30}}))
    stdin.write(slow + b"\n")
    ping = (
        rpc("ping", id=2) if era != "2025-11-25" else {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    )
    stdin.write(orjson.dumps(ping) + b"\n")  # answered: the call before it is running
    await stdin.drain()
    assert b'"id":2' in await asyncio.wait_for(stdout.readline(), scaled(30))
    proc.proc.send_signal(signal.SIGINT)  # the sync tool holds its thread: a second Ctrl-C
    await proc.line_with("mcpkit: stopping; press Ctrl-C again to stop now")
    code, err = await proc.interrupt()
    assert code == 130 and "Traceback" not in err and "Error" not in err, err


async def test_sigterm_drains_without_telling_anyone_to_press_ctrl_c() -> None:
    """A supervisor's SIGTERM drains as Ctrl-C does, but no one is at a keyboard: no
    "press Ctrl-C again" line (the drain is logged, at info, for whoever configured logging)."""
    proc, port = await _http_server(drain_timeout=1)
    await wait_port(port, proc.proc)
    proc.proc.send_signal(signal.SIGTERM)
    assert proc.proc.stderr is not None
    rest = await asyncio.wait_for(proc.proc.stderr.read(), scaled(30))
    code = await asyncio.wait_for(proc.proc.wait(), scaled(30))
    err = "\n".join(proc.lines) + "\n" + rest.decode()
    assert code in (0, -signal.SIGTERM) and "Traceback" not in err, err
    assert "Ctrl-C again" not in err and "draining" not in err, err
