"""A backend that dies mid-call (SIGKILL) through the gateway: the call's outcome is unknown,
so the front answers a JSON-RPC error naming the backend (and a process's exit code), never a
tool result with isError; a task following the call ends `failed` (TASK-17), as a real client
polling it sees. Over stdio (the gateway's own child process) and HTTP (a process of its own)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from gateway_support import serving, settled
from mcpkit.client import Client
from mcpkit.gateway import Gateway
from mcpkit.host import parse_config
from mcpkit.protocol.errors import MCPError
from processes import http_server
from support import ROOT, scaled

pytestmark = pytest.mark.timing

BACKEND = ROOT / "tests/servers/mortal_backend.py"
OUTCOME = "during the call; the call's outcome is unknown"
EXITED = f"backend 'mortal' exited (code -9) {OUTCOME}"


@contextlib.asynccontextmanager
async def gateway(transport: str, pid_file: Path) -> AsyncIterator[str]:
    """A gateway over the mortal backend, served over HTTP: its URL."""
    async with contextlib.AsyncExitStack() as stack:
        if transport == "stdio":
            entry: dict[str, Any] = {
                "command": sys.executable,
                "args": [str(BACKEND), str(pid_file)],
            }
        else:
            base = await stack.enter_async_context(http_server(BACKEND, str(pid_file), "--http"))
            entry = {"url": f"{base}/mcp"}
        entry.update(trusted=True, consent={"allow": ["*"]})
        front = Gateway(parse_config({"mcpServers": {"mortal": entry}}, env={}))
        yield await stack.enter_async_context(serving(front))


async def kill_when_running(pid_file: Path) -> None:
    """Wait until the backend has the call (its tool wrote the file), then SIGKILL it."""
    async with asyncio.timeout(scaled(20)):
        while not await asyncio.to_thread(pid_file.exists):  # noqa: ASYNC110 - its only signal
            await asyncio.sleep(0.02)
    pid = int(await asyncio.to_thread(pid_file.read_text))
    os.kill(pid, signal.SIGKILL)


def check_error(error: dict[str, Any], transport: str) -> None:
    """The one-line JSON-RPC error of a call whose backend died."""
    assert error["code"] == -32603
    message = error["message"]
    assert "\n" not in message and OUTCOME in message, message
    if transport == "stdio":
        assert message.startswith(EXITED), message
        assert error["data"] == {"reason": "backend-exited", "backend": "mortal", "exitCode": -9}
    else:
        assert message.startswith("backend 'mortal' went away ("), message
        assert error["data"] == {"reason": "backend-disconnected", "backend": "mortal"}


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_plain_call_on_a_killed_backend_is_a_json_rpc_error(
    tmp_path: Path, transport: str
) -> None:
    pid_file = tmp_path / "pid"
    async with gateway(transport, pid_file) as front, Client(front) as client:
        killer = asyncio.create_task(kill_when_running(pid_file))
        with pytest.raises(MCPError) as caught:
            async with asyncio.timeout(scaled(30)):
                await client.call_tool("mortal__stall", {})
        await killer
        check_error(caught.value.to_wire(), transport)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_task_on_a_killed_backend_ends_failed(tmp_path: Path, transport: str) -> None:
    pid_file = tmp_path / "pid"
    async with gateway(transport, pid_file) as front, Client(front) as client:
        created = await client.request("tools/call", {"name": "mortal__long_job"}, raw=True)
        assert created["resultType"] == "task", created
        await kill_when_running(pid_file)
        final = await settled(client, created["taskId"])
        assert final["status"] == "failed", final  # not `completed` with isError (TASK-17)
        check_error(final["error"], transport)
