"""StdioTransport and ClientSession against a scripted subprocess server."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcpkit.client import ClientSession, ConnectionClosed, InvalidResponse, RequestTimeout
from mcpkit.client.errors import TransportError
from mcpkit.client.stdio import StdioTransport
from mcpkit.protocol.errors import InvalidParams
from mcpkit.protocol.jsonrpc import Notification
from support import first_step, scaled

FAKE = str(Path(__file__).with_name("test_client_fake_server.py"))
SERVER = [sys.executable, FAKE]


def same_dir(a: str | Path, b: str | Path) -> bool:
    return Path(a).resolve() == Path(b).resolve()


async def test_session_over_stdio() -> None:
    seen: list[Notification] = []
    async with ClientSession(SERVER, on_notification=seen.append, stderr="capture") as client:
        info = await client.discover()
        assert info["supportedVersions"] == ["2026-07-28"]
        tools = await client.list_tools()
        assert [t["name"] for t in tools] == ["add", "echo"]  # two pages
        params = {"name": "add", "arguments": {"a": 2, "b": 40}, "_meta": {"progressToken": 7}}
        result = await client.request("tools/call", params)
        assert result["content"] == [{"type": "text", "text": "42"}]
        assert [n.method for n in seen] == ["notifications/progress"]
        assert (await client.list_prompts())[0]["name"] == "greet"
        assert (await client.list_resources())[0]["uri"] == "mem://a"
        assert (await client.list_resource_templates())[0]["uriTemplate"] == "mem://{x}"
        meta = await client.call_tool("meta")
        assert (
            '"io.modelcontextprotocol/protocolVersion": "2026-07-28"' in meta["content"][0]["text"]
        )
        with pytest.raises(InvalidParams, match="Unknown tool"):
            await client.call_tool("nope")
        with pytest.raises(InvalidResponse):
            await client.call_tool("odd")


async def test_concurrent_requests_are_routed_by_id() -> None:
    async with ClientSession(SERVER) as client:
        results = await asyncio.gather(
            *(client.call_tool("add", {"a": i, "b": 1}) for i in range(20))
        )
    assert [r["content"][0]["text"] for r in results] == [str(i + 1) for i in range(20)]


@pytest.mark.timing
async def test_timeout_sends_cancelled_notification() -> None:
    transport = StdioTransport(SERVER, stderr="capture")
    async with ClientSession(transport, timeout=0.2) as client:
        with pytest.raises(RequestTimeout):
            await client.call_tool("sleep")
        await client.discover()  # still usable; the server saw the cancel before this
    # Closing waited for the process and read its stderr to the end.
    cancels = [line for line in transport.stderr_tail if "notifications/cancelled" in line]
    assert len(cancels) == 1
    assert '"requestId": 1' in cancels[0]


@pytest.mark.timing
async def test_dead_process_fails_pending_calls_promptly() -> None:
    transport = StdioTransport(SERVER, stderr="capture")
    async with ClientSession(transport, timeout=scaled(10)) as client:
        pending = asyncio.ensure_future(client.call_tool("sleep"))
        await first_step()  # it is in flight before the process dies
        started = time.monotonic()
        with pytest.raises(ConnectionClosed) as info:
            await client.call_tool("die")
        with pytest.raises(ConnectionClosed):
            await pending
        assert time.monotonic() - started < scaled(3)  # not at the call's timeout
        assert "code 3" in str(info.value)
        assert "dying now" in str(info.value)  # last stderr line, when captured
        with pytest.raises(ConnectionClosed):
            await client.discover()  # later calls fail at once too
    assert transport.returncode == 3


async def test_missing_executable_is_a_transport_error() -> None:
    transport = StdioTransport(["/nonexistent/definitely-not-here"])
    with pytest.raises(TransportError, match="cannot start"):
        await transport.start()


async def test_close_closes_stdin_and_waits() -> None:
    transport = StdioTransport(SERVER)
    await transport.start()
    await transport.close()
    assert transport.returncode == 0  # exited by itself on EOF (TR-STDIO-11 step 1-2)


@pytest.mark.timing
async def test_close_escalates_for_a_stubborn_server() -> None:
    transport = StdioTransport([*SERVER, "--ignore-eof"], shutdown_timeout=0.3)
    await transport.start()
    started = time.monotonic()
    await transport.close()
    assert time.monotonic() - started < scaled(5)
    assert transport.returncode is not None and transport.returncode < 0  # killed


async def test_close_fails_pending_calls() -> None:
    transport = StdioTransport(SERVER, shutdown_timeout=0.5)
    await transport.start()
    pending = asyncio.ensure_future(transport.request(1, "tools/call", {"name": "sleep"}))
    await first_step()  # in flight when the transport closes
    await transport.close()
    with pytest.raises(ConnectionClosed):
        await pending


async def test_env_and_cwd_reach_the_process(tmp_path: Path) -> None:
    script = tmp_path / "envserver.py"
    script.write_text(
        "import json, os, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    r = {'resultType': 'complete', 'env': os.environ.get('MCPKIT_T'), 'cwd': os.getcwd()}\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n"
    )
    async with ClientSession(
        [sys.executable, str(script)], env={"MCPKIT_T": "yes"}, cwd=tmp_path
    ) as client:
        result: dict[str, Any] = await client.discover()
    assert result["env"] == "yes"
    assert same_dir(result["cwd"], tmp_path)


async def test_garbage_lines_on_stdout_are_skipped(tmp_path: Path) -> None:
    script = tmp_path / "noisy.py"
    script.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    print('not json', flush=True)\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'method': 'notifications/message',"
        " 'params': {'level': 'info', 'data': 'hi'}}), flush=True)\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': 'other', 'result': {}}), flush=True)\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {}}), flush=True)\n"
    )
    seen: list[str] = []

    async def on_note(n: Notification) -> None:
        seen.append(n.method)

    async with ClientSession([sys.executable, str(script)], on_notification=on_note) as client:
        assert await client.discover() == {}
    assert seen == ["notifications/message"]
