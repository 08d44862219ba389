"""A backend process that dies mid-call (SIGKILL) through the gateway: the call's outcome is
unknown, so the front answers a JSON-RPC error naming the backend and its exit code, never a
tool result with isError; a task following the call ends `failed` (TASK-17), as a real client
polling it sees."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway_support import serving
from mcpkit.client import Client
from mcpkit.gateway import Gateway
from mcpkit.host import parse_config
from mcpkit.protocol.errors import MCPError
from support import ROOT, scaled

BACKEND = ROOT / "tests/servers/mortal_backend.py"
DIED = "backend 'mortal' exited (code -9) during the call; the call's outcome is unknown"


def gateway(pid_file: Path) -> Gateway:
    entry = {
        "command": sys.executable,
        "args": [str(BACKEND), str(pid_file)],
        "trusted": True,
        "consent": {"allow": ["*"]},
    }
    return Gateway(parse_config({"mcpServers": {"mortal": entry}}, env={}))


async def kill_when_running(pid_file: Path) -> None:
    """Wait until the backend has the call (its tool wrote the file), then SIGKILL it."""
    async with asyncio.timeout(scaled(20)):
        while not await asyncio.to_thread(pid_file.exists):  # noqa: ASYNC110 - its only signal
            await asyncio.sleep(0.02)
    pid = int(await asyncio.to_thread(pid_file.read_text))
    os.kill(pid, signal.SIGKILL)


async def test_a_plain_call_on_a_killed_backend_is_a_json_rpc_error(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    async with serving(gateway(pid_file)) as front, Client(front) as client:
        killer = asyncio.create_task(kill_when_running(pid_file))
        with pytest.raises(MCPError) as caught:
            async with asyncio.timeout(scaled(30)):
                await client.call_tool("mortal__stall", {})
        await killer
        assert caught.value.code == -32603
        assert caught.value.message.startswith(DIED), caught.value.message
        assert "\n" not in caught.value.message
        assert caught.value.data == {
            "reason": "backend-exited",
            "backend": "mortal",
            "exitCode": -9,
        }


async def test_a_task_on_a_killed_backend_ends_failed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    async with serving(gateway(pid_file)) as front, Client(front) as client:
        created = await client.request("tools/call", {"name": "mortal__long_job"}, raw=True)
        assert created["resultType"] == "task", created
        await kill_when_running(pid_file)
        final = await _settled(client, created["taskId"])
        assert final["status"] == "failed", final  # not `completed` with isError (TASK-17)
        assert final["error"]["code"] == -32603
        assert final["error"]["message"].startswith(DIED)
        assert final["error"]["data"]["exitCode"] == -9


async def _settled(client: Client, task_id: str) -> dict[str, Any]:
    """Poll the front task as a client does (TASK-09) until it ends."""
    async with asyncio.timeout(scaled(30)):
        while True:
            task = await client.request("tasks/get", {"taskId": task_id}, use_cache=False)
            if task["status"] not in ("working", "input_required"):
                return task
            await asyncio.sleep(0.05)  # polling a task is its protocol (pollIntervalMs)
