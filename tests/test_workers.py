"""`mcpkit run --workers N`: N real processes on one port. Connections spread over them
(SO_REUSEPORT), an MRTR retry is answered by any of them (one key set), 2025-11-25 sessions
are refused with a reason, what cannot be shared is refused at start, a dead worker is
replaced, and SIGTERM drains them all."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from support import (
    LEGACY_HEADERS,
    ROOT,
    free_port,
    headers_for,
    legacy_initialize,
    meta,
    rpc,
    scaled,
    wait_port,
)

SERVER = str(ROOT / "tests/servers/worker_server.py")
MCPKIT = [sys.executable, "-m", "mcpkit"]

pytestmark = [
    pytest.mark.timing,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SO_REUSEPORT"),
]


async def start(
    *extra: str, env: dict[str, str] | None = None
) -> tuple[asyncio.subprocess.Process, int]:
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        *MCPKIT,
        "run",
        SERVER,
        "-T",
        "http",
        "--port",
        str(port),
        *extra,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    return proc, port


@pytest.fixture
async def workers() -> AsyncIterator[tuple[asyncio.subprocess.Process, int]]:
    proc, port = await start("--workers", "2")
    await wait_port(port, proc)
    await both_serve(port)
    yield proc, port
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), scaled(30))


async def call(port: int, name: str, **params: Any) -> dict[str, Any]:
    """One tools/call on a connection of its own."""
    message = rpc("tools/call", {"name": name, "arguments": {}, **params})
    message["params"]["_meta"] = meta({"elicitation": {}})
    connector = aiohttp.TCPConnector(force_close=True)
    async with aiohttp.ClientSession(connector=connector) as s:
        url = f"http://127.0.0.1:{port}/mcp"
        async with s.post(url, data=orjson.dumps(message), headers=headers_for(message)) as r:
            return await r.json()  # type: ignore[no-any-return]


async def pids(port: int, count: int = 64) -> set[int]:
    """The workers that answered `count` calls, each on a fresh connection."""
    replies = await asyncio.gather(*(call(port, "pid") for _ in range(count)))
    return {r["result"]["structuredContent"] for r in replies}


async def both_serve(port: int) -> None:
    """Until both workers answer (each binds the port when it is ready; no event crosses the
    process boundary, so this polls, with a deadline)."""
    async with asyncio.timeout(scaled(30)):
        while len(await pids(port)) < 2:
            pass


async def test_workers_share_the_port_and_the_state_keys(
    workers: tuple[asyncio.subprocess.Process, int],
) -> None:
    proc, port = workers
    answered = await pids(port)
    assert len(answered) == 2  # the kernel spreads connections (all 64 on one: 2^-63)
    first = (await call(port, "greet"))["result"]
    assert first["resultType"] == "input_required"
    retry = {
        "inputResponses": {"name": {"action": "accept", "content": {"name": "Ann"}}},
        "requestState": first["requestState"],
    }
    replies = await asyncio.gather(*(call(port, "greet", **retry) for _ in range(32)))
    texts = {r["result"]["content"][0]["text"] for r in replies}
    assert texts == {f"Ann {pid}" for pid in answered}  # each worker opens the other's state
    init, headers = legacy_initialize(), LEGACY_HEADERS
    async with aiohttp.ClientSession() as s:
        url = f"http://127.0.0.1:{port}/mcp"
        async with s.post(url, data=orjson.dumps(init), headers=headers) as r:
            assert r.status == 400 and "mcp-session-id" not in r.headers
            error = (await r.json())["error"]
    assert error["code"] == -32022 and error["data"]["supported"] == ["2026-07-28"]
    assert "a session cannot move between worker processes" in error["message"]
    # SIGTERM: every worker drains and exits, then the supervisor.
    proc.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(proc.wait(), scaled(30)) == 0
    assert all(ended(pid) for pid in answered)


async def test_a_dead_worker_is_replaced(workers: tuple[asyncio.subprocess.Process, int]) -> None:
    proc, port = workers
    before = await pids(port)
    victim = min(before)
    os.kill(victim, signal.SIGKILL)
    assert proc.stderr is not None
    line = await asyncio.wait_for(proc.stderr.readline(), scaled(30))
    while line and b"restarting" not in line:
        line = await asyncio.wait_for(proc.stderr.readline(), scaled(30))
    assert b"exited (status -9); restarting it" in line
    await both_serve(port)  # the new worker binds the port when it is ready
    after = await pids(port)
    assert victim not in after and len(after & before) == 1


async def test_what_workers_cannot_share_is_refused_at_start() -> None:
    proc, _ = await start("--workers", "2", env={"WORKER_TASKS": "1"})
    assert proc.stderr is not None
    err = (await asyncio.wait_for(proc.stderr.read(), scaled(30))).decode()
    assert await proc.wait() == 1
    assert err.strip() == (
        "error: --workers 2: this server keeps tasks in process memory, which workers "
        "do not share; give --redis URL (or MCPKIT_REDIS_URL), or run one worker"
    )
    proc, _ = await start("--workers", "2", "-T", "stdio")
    assert proc.stderr is not None
    err = (await asyncio.wait_for(proc.stderr.read(), scaled(30))).decode()
    assert await proc.wait() == 1 and "--workers needs the HTTP transport" in err


async def test_workers_do_not_outlive_their_supervisor(
    workers: tuple[asyncio.subprocess.Process, int],
) -> None:
    proc, port = workers
    answered = await pids(port)
    proc.kill()  # however it dies, its workers are told (SIGTERM: they drain and exit)
    assert proc.stderr is not None
    await asyncio.wait_for(proc.stderr.read(), scaled(30))  # EOF: every holder of the pipe is gone
    # A process closes its files a moment before it exits: wait for each exit itself.
    await asyncio.wait_for(asyncio.gather(*(exited(pid) for pid in answered)), scaled(10))
    assert all(ended(pid) for pid in answered)


async def exited(pid: int) -> None:
    """Until `pid` (any process, not only a child) has exited: its pidfd becomes readable."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    loop.add_reader(fd, lambda: done.done() or done.set_result(None))
    try:
        await done
    finally:
        loop.remove_reader(fd)
        os.close(fd)


def ended(pid: int) -> bool:
    """The process exited (an orphan may stay a zombie until init reaps it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"
