"""Streamable HTTP over a real socket: uvicorn in a subprocess, aiohttp as the client."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator

import aiohttp
import orjson
import pytest

from support import ROOT, free_port, headers_for, post, record, rpc, scaled


@pytest.fixture
async def base_url() -> AsyncIterator[str]:
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "tests/servers/basic_server.py"),
        "--http",
        str(port),
        stderr=asyncio.subprocess.PIPE,
    )
    deadline = asyncio.get_running_loop().time() + scaled(20)
    while True:  # readiness: the port accepts connections
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            break
        except OSError:
            if proc.returncode is not None or asyncio.get_running_loop().time() > deadline:
                raise RuntimeError("server did not start") from None
            await asyncio.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    # Graceful shutdown; uvicorn re-raises the caught SIGTERM at exit, as a supervisor expects.
    assert await asyncio.wait_for(proc.wait(), scaled(10)) in (0, -15)
    assert proc.stderr is not None
    assert b"Traceback" not in await proc.stderr.read()


async def test_call_over_socket(base_url: str) -> None:
    async with aiohttp.ClientSession() as s:
        status, msgs = await post(
            s, base_url, rpc("tools/call", {"name": "echo", "arguments": {"text": "héllo"}})
        )
        assert status == 200 and msgs[0]["result"]["content"][0]["text"] == "héllo"
        status, msgs = await post(s, base_url, rpc("tools/list"))
        assert [t["name"] for t in msgs[0]["result"]["tools"]] == [
            "echo",
            "noisy",
            "slow",
            "change",
        ]


async def test_dns_rebinding_over_socket(base_url: str) -> None:
    async with aiohttp.ClientSession() as s:
        msg = rpc("server/discover")
        hdrs = headers_for(msg)
        hdrs["host"] = "evil.example.com"
        async with s.post(base_url + "/mcp", data=orjson.dumps(msg), headers=hdrs) as resp:
            assert resp.status == 403


async def test_listen_stream_and_disconnect(base_url: str) -> None:
    async with aiohttp.ClientSession() as s:
        msg = rpc("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=42)
        hdrs = headers_for(msg)
        hdrs.pop("host")
        async with s.post(base_url + "/mcp", data=orjson.dumps(msg), headers=hdrs) as resp:
            assert resp.headers["content-type"] == "text/event-stream"
            ack = orjson.loads((await resp.content.readuntil(b"\n\n"))[5:])
            record("subscriptions/listen", ack)
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            await post(s, base_url, rpc("tools/call", {"name": "change"}))
            note = orjson.loads(
                (await asyncio.wait_for(resp.content.readuntil(b"\n\n"), scaled(5)))[5:]
            )
            record("subscriptions/listen", note)
            assert note["method"] == "notifications/tools/list_changed"
        # The stream is closed; the server keeps serving.
        status, _ = await post(s, base_url, rpc("server/discover"))
        assert status == 200


async def test_progress_as_sse_over_socket(base_url: str) -> None:
    async with aiohttp.ClientSession() as s:
        msg = rpc("tools/call", {"name": "slow"}, progressToken="t")
        hdrs = headers_for(msg)
        hdrs.pop("host")
        async with s.post(base_url + "/mcp", data=orjson.dumps(msg), headers=hdrs) as resp:
            first = orjson.loads((await resp.content.readuntil(b"\n\n"))[5:])
            record("tools/call", first)
            assert first["method"] == "notifications/progress"
        # Closing the response cancelled the handler; the server is fine.
        status, msgs = await post(
            s, base_url, rpc("tools/call", {"name": "echo", "arguments": {"text": "x"}})
        )
        assert status == 200 and msgs[0]["result"]["content"][0]["text"] == "x"
