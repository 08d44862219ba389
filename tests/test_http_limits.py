"""HTTP limits over real sockets (nginx's defaults, smaller here): a head that never ends, a
body that stalls, oversized heads and a full house are answered with their status within
the configured time, while other clients are served throughout."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from scale_support import Connection
from support import ROOT, free_port, headers_for, rpc, scaled, wait_port

pytestmark = pytest.mark.timing

LIMITS = {"header_timeout": 1, "body_timeout": 1, "max_body_size": 1000}


async def start(options: dict[str, Any]) -> tuple[asyncio.subprocess.Process, int]:
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "tests/servers/limits_server.py"),
        str(port),
        json.dumps(options),
        stderr=asyncio.subprocess.PIPE,
    )
    await wait_port(port, proc)
    return proc, port


@pytest.fixture
async def port() -> AsyncIterator[int]:
    proc, port = await start(LIMITS)
    yield port
    proc.terminate()
    await asyncio.wait_for(proc.wait(), scaled(10))
    assert proc.stderr is not None
    assert b"Traceback" not in await proc.stderr.read()


def request_bytes(message: dict[str, Any], **extra: str) -> bytes:
    body = orjson.dumps(message)
    headers = {**headers_for(message), "content-length": str(len(body)), **extra}
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode() + body


async def exchange(port: int, data: bytes, timeout: float = 5) -> bytes:
    """Send `data` on a new connection; everything the server sends until it closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    try:
        return await asyncio.wait_for(reader.read(), scaled(timeout))
    finally:
        writer.close()


async def echo_ok(port: int) -> None:
    message = rpc("tools/call", {"name": "echo", "arguments": {"text": "served"}})
    reply = await exchange(port, request_bytes(message, connection="close"))
    assert reply.startswith(b"HTTP/1.1 200") and b"served" in reply


def status_and_body(reply: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = reply.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), orjson.loads(body)


async def test_a_head_that_never_ends_gets_408(port: int) -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    slow = asyncio.create_task(exchange(port, b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n"))
    for _ in range(3):  # others are served while it waits
        await echo_ok(port)
    assert not slow.done()
    status, body = status_and_body(await slow)
    assert status == 408 and body["id"] is None and "head" in body["error"]["message"]
    assert loop.time() - started < 1 + 1 + scaled(2)  # the timeout, the sweep, some slack


async def test_a_stalled_body_gets_408(port: int) -> None:
    message = rpc("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    whole = request_bytes(message)
    slow = asyncio.create_task(exchange(port, whole[:-5]))  # the last bytes never come
    await echo_ok(port)
    status, body = status_and_body(await slow)
    assert status == 408 and body["id"] is None and "stalled" in body["error"]["message"]


@pytest.mark.parametrize(
    "extra",
    [
        {"x-big": "a" * 16_000},  # one line over 8 KiB
        {f"x-h{i}": "v" for i in range(150)},  # too many fields
        {"mcp-param-region": "r" * 1_000_000},  # a 1 MB mirrored header
    ],
    ids=["long-line", "many-fields", "megabyte-param"],
)
async def test_oversized_heads_get_431(port: int, extra: dict[str, str]) -> None:
    message = rpc("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    status, body = status_and_body(await exchange(port, request_bytes(message, **extra)))
    assert status == 431 and body["id"] is None
    await echo_ok(port)


async def test_a_body_never_read_gets_413_with_a_null_id(port: int) -> None:
    message = rpc("tools/call", {"name": "echo", "arguments": {"text": "x" * 2000}})
    reply = await exchange(port, request_bytes(message))
    status, body = status_and_body(reply)
    assert status == 413 and body == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Request body too large (limit 1000 bytes)"},
    }
    assert b"connection: close" in reply.lower()


async def test_an_idle_keep_alive_connection_is_closed_and_a_busy_one_kept() -> None:
    proc, port = await start({"keep_alive_timeout": 1})
    try:
        loop = asyncio.get_running_loop()
        conn = await Connection.open(port)
        message = rpc("tools/call", {"name": "echo", "arguments": {"text": "again"}})
        for _ in range(3):  # the same connection, reused while it is not idle for long
            conn.writer.write(request_bytes(message))
            assert b"again" in (await asyncio.wait_for(conn.response(), scaled(5)))[2]
        # Two requests in one write (pipelined): both answered, in order.
        first = rpc("tools/call", {"name": "echo", "arguments": {"text": "first"}})
        second = rpc("tools/call", {"name": "echo", "arguments": {"text": "second"}})
        conn.writer.write(request_bytes(first) + request_bytes(second))
        assert b"first" in (await asyncio.wait_for(conn.response(), scaled(5)))[2]
        assert b"second" in (await asyncio.wait_for(conn.response(), scaled(5)))[2]
        idle_from = loop.time()
        assert await asyncio.wait_for(conn.closed_by_peer(), scaled(5))  # closed by the server
        assert 1 <= loop.time() - idle_from < 1 + 1 + scaled(1)  # the timeout, the sweep, slack
        conn.close()
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), scaled(10))


async def test_past_max_connections_gets_503_with_retry_after() -> None:
    proc, port = await start({"max_connections": 2})
    try:
        held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(2)]
        message = rpc("tools/call", {"name": "echo", "arguments": {"text": "x"}})
        reply = await exchange(port, request_bytes(message))
        status, body = status_and_body(reply)
        assert status == 503 and b"retry-after: 5" in reply.lower()
        assert body["error"]["code"] == -31000 and body["id"] is None
        for _, writer in held:
            writer.close()
        deadline = asyncio.get_running_loop().time() + scaled(5)
        while True:  # until the held connections' close reaches the server
            try:
                await echo_ok(port)
                break
            except AssertionError:
                if asyncio.get_running_loop().time() > deadline:
                    raise AssertionError("not served again after the connections closed") from None
                await asyncio.sleep(0.05)
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), scaled(10))


def test_mcpkit_run_passes_the_limits(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from mcpkit.cli.main import app

    port = free_port()
    path = tmp_path / "limited.py"
    path.write_text(
        "class S:\n"
        "    def run(self, transport, **options):\n"
        "        print(transport, sorted(options.items()))\n"
        "custom = S()\n"
    )
    result = CliRunner().invoke(
        app,
        [
            "run",
            f"{path}:custom",
            "-T",
            "http",
            "--port",
            str(port),
            "--header-timeout",
            "5",
            "--max-connections",
            "10",
            "--body-timeout",
            "7",
            "--max-body-size",
            "1000",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        "http [('body_timeout', 7.0), ('header_timeout', 5.0), ('host', '127.0.0.1'), "
        f"('max_body_size', 1000), ('max_connections', 10), ('port', {port})]"
    )
