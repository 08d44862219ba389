"""HTTP limits over real sockets (nginx's defaults, smaller here): a head that never ends, a
body that stalls, oversized heads and a full house are answered with their status within
the configured time, while other clients are served throughout."""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from scale_support import Connection
from support import ROOT, free_port, headers_for, rpc, scaled, wait_port
from wire_schemas import MODERN, check

pytestmark = pytest.mark.timing

LIMITS = {"header_timeout": 1, "body_timeout": 1, "max_body_size": 1000}


async def start(
    options: dict[str, Any], preexec_fn: Callable[[], None] | None = None
) -> tuple[asyncio.subprocess.Process, int]:
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "tests/servers/limits_server.py"),
        str(port),
        json.dumps(options),
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=preexec_fn,
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


def unread(body: dict[str, Any]) -> bool:
    """A refusal of a request never read: no `id` at all (BASE-11), valid on the wire."""
    check(MODERN, "tools/call", body)
    return "id" not in body


async def test_a_head_that_never_ends_gets_408(port: int) -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    slow = asyncio.create_task(exchange(port, b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n"))
    for _ in range(3):  # others are served while it waits
        await echo_ok(port)
    assert not slow.done()
    status, body = status_and_body(await slow)
    assert status == 408 and unread(body) and "head" in body["error"]["message"]
    assert loop.time() - started < 1 + 1 + scaled(2)  # the timeout, the sweep, some slack


async def test_a_stalled_body_gets_408(port: int) -> None:
    message = rpc("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    whole = request_bytes(message)
    slow = asyncio.create_task(exchange(port, whole[:-5]))  # the last bytes never come
    await echo_ok(port)
    status, body = status_and_body(await slow)
    assert status == 408 and unread(body) and "stalled" in body["error"]["message"]


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
    assert status == 431 and unread(body)
    await echo_ok(port)


async def test_an_overlong_request_line_gets_414_without_an_id(port: int) -> None:
    message = rpc("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    data = request_bytes(message).replace(b"POST /mcp ", b"POST /mcp?" + b"q" * 9000 + b" ", 1)
    status, body = status_and_body(await exchange(port, data))
    assert status == 414 and unread(body) and "request line" in body["error"]["message"]
    await echo_ok(port)


async def test_a_body_never_read_gets_413_without_an_id(port: int) -> None:
    message = rpc("tools/call", {"name": "echo", "arguments": {"text": "x" * 2000}})
    reply = await exchange(port, request_bytes(message))
    status, body = status_and_body(reply)
    assert status == 413 and body == {
        "jsonrpc": "2.0",
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
        assert body["error"]["code"] == -31000 and unread(body)
        for _ in range(3):
            assert (await exchange(port, request_bytes(message))).startswith(b"HTTP/1.1 503")
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
    assert proc.stderr is not None
    lines = (await proc.stderr.read()).decode().splitlines()
    refused = [line[line.index("refused") :] for line in lines if "refused" in line]
    assert refused == [  # one line per 10 s, not one per refusal
        "refused 1 connection: connection cap 2 reached; raise "
        "max_connections (mcpkit run --max-connections) and the descriptor limit (ulimit -n), "
        "or add instances"
    ], lines


LISTEN = rpc("subscriptions/listen", {"notifications": {"toolsListChanged": True}})


async def open_listen(port: int) -> tuple[int, asyncio.StreamReader, asyncio.StreamWriter]:
    """A listen stream on its own connection: the status, and the connection (open)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request_bytes(LISTEN))
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), scaled(10))
    status = int(head.split(b" ", 2)[1])
    if status == 200:  # listening once acknowledged
        event = await asyncio.wait_for(reader.readuntil(b"\n\n"), scaled(10))
        assert b"notifications/subscriptions/acknowledged" in event, event
    return status, reader, writer


async def test_listeners_past_their_budget_never_starve_calls() -> None:
    # 20 connections: 10 kept for calls, 10 for listen streams (the "auto" split).
    proc, port = await start({"max_connections": 20})
    opened: list[asyncio.StreamWriter] = []
    try:
        statuses = []
        for _ in range(20):  # as many listeners as connections
            status, _reader, writer = await open_listen(port)
            statuses.append(status)
            if status == 200:
                opened.append(writer)
            else:
                writer.close()
        assert statuses == [200] * 10 + [503] * 10, statuses
        for _ in range(3):  # calls are served all the same
            await echo_ok(port)
    finally:
        for writer in opened:
            writer.close()
        proc.terminate()
        await asyncio.wait_for(proc.wait(), scaled(10))
    assert proc.stderr is not None
    err = (await proc.stderr.read()).decode()
    refused = [line[line.index("refused") :] for line in err.splitlines() if "refused" in line]
    assert refused == [
        "refused 1 listen stream: listen-stream cap 10 reached; raise "
        "max_listen_streams (mcpkit run --max-listen-streams) and the descriptor limit "
        "(ulimit -n), or add instances"
    ], err


def _low_fd_limit() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))


def _max_open_files(pid: int) -> tuple[str, str]:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return soft, hard
    raise AssertionError("no 'Max open files' line")


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="needs /proc")
async def test_run_raises_the_soft_descriptor_limit_to_the_hard_one() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard <= 1024:
        pytest.skip("the hard descriptor limit is 1024: nothing to raise")
    proc, _port = await start({}, preexec_fn=_low_fd_limit)
    try:
        soft_now, hard_now = _max_open_files(proc.pid)
        assert soft_now == hard_now == str(hard)
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


class _Lines(logging.Handler):
    """The messages logged, and an event once `wanted` of them were."""

    def __init__(self, wanted: int) -> None:
        super().__init__()
        self.messages: list[str] = []
        self.wanted = wanted
        self.enough = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
        if len(self.messages) >= self.wanted:
            self.enough.set()


async def test_refusals_are_counted_in_one_line_per_interval() -> None:
    from mcpkit.server.transports.budget import RefusalLog

    logger = logging.getLogger("mcpkit.test.refusals")
    lines = _Lines(wanted=2)
    logger.addHandler(lines)
    try:
        refusals = RefusalLog(logger, "connection", interval=0.05)
        for _ in range(1001):
            refusals.refused("cap 9 reached; raise it")
        await asyncio.wait_for(lines.enough.wait(), scaled(5))  # the interval's line
    finally:
        logger.removeHandler(lines)
    assert lines.messages == [
        "refused 1 connection: cap 9 reached; raise it",
        "refused 1,000 connections in the last 0.05 s: cap 9 reached; raise it",
    ]


def test_the_budget_keeps_room_for_calls() -> None:
    from mcpkit.server.transports.budget import budget_for, split

    assert budget_for(20_000) == split(19_900)
    assert split(19_900).max_listen_streams == 17_910
    assert split(20).max_listen_streams == 10  # at most half goes to calls
    assert budget_for(256).max_connections == 200  # never below two reserves
