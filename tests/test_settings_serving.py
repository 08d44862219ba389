"""`mcpkit run` reads MCPKIT_* settings: port, log level and limits, and refuses bad ones."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import aiohttp
import orjson

from support import free_port, headers_for, rpc, scaled

SERVER = '''
from mcpkit import Server

server = Server("settings")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''


async def test_mcpkit_run_takes_port_log_level_and_body_limit_from_the_environment(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings_server.py"
    path.write_text(SERVER)
    port = free_port()
    env = {
        **os.environ,
        "MCPKIT_PORT": str(port),
        "MCPKIT_LOG_LEVEL": "info",
        "MCPKIT_MAX_BODY_BYTES": "400",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcpkit.cli",
        "run",
        str(path),
        "-T",
        "http",
        env=env,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    try:
        while True:  # readiness: uvicorn's info line (shown because of MCPKIT_LOG_LEVEL)
            line = await asyncio.wait_for(proc.stderr.readline(), scaled(20))
            assert line, "the server exited before it was ready"
            if b"Uvicorn running on" in line:
                assert f"127.0.0.1:{port}".encode() in line
                break
        message = rpc("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        hdrs = headers_for(message)
        hdrs.pop("host", None)
        url = f"http://127.0.0.1:{port}/mcp"
        async with aiohttp.ClientSession() as session:
            async with session.post(url, data=orjson.dumps(message), headers=hdrs) as resp:
                assert resp.status == 200
                assert (await resp.json())["result"]["content"][0]["text"] == "5"
            big = rpc("tools/call", {"name": "add", "arguments": {"a": 2, "pad": "x" * 500}})
            hdrs = headers_for(big)
            hdrs.pop("host", None)
            async with session.post(url, data=orjson.dumps(big), headers=hdrs) as resp:
                assert resp.status == 413  # MCPKIT_MAX_BODY_BYTES
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), scaled(10))


def test_a_bad_setting_is_one_line_and_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "settings_server.py"
    path.write_text(SERVER)
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit.cli", "run", str(path), "-T", "http"],
        env={**os.environ, "MCPKIT_PORT": "eighty"},
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "MCPKIT_PORT='eighty' is not valid: expected an integer from 0 to 65535" in lines[0]
