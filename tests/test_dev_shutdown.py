"""Ctrl-C on `mcpkit dev` (and `mcpkit ui`) while a request of the page is still in flight (an
app's long poll, a tool that never answers): the command ends quietly and promptly, the
request gets an answer saying why, and no traceback reaches the terminal."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from dev_support import PageAPI, mcpkit
from support import ROOT, scaled

HANGING = ROOT / "tests" / "servers" / "hanging_tool_server.py"


async def test_ctrl_c_with_a_call_in_flight_ends_quietly(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    async with (
        mcpkit(str(HANGING), "--no-open", tmp_path=tmp_path) as dev,
        PageAPI.login(dev.url) as api,
    ):
        params = {"name": "wait", "arguments": {"marker": str(marker)}}
        call = asyncio.create_task(
            api.post(
                "/api/inspect/hanging_tool_server/request",
                {"method": "tools/call", "params": params},
            )
        )
        async with asyncio.timeout(scaled(30)):  # until the server is inside the tool
            while not await asyncio.to_thread(marker.exists):  # noqa: ASYNC110 - its only signal
                await asyncio.sleep(0.05)
        dev.proc.send_signal(signal.SIGINT)
        async with asyncio.timeout(scaled(10)):  # at once, not after uvicorn's grace time
            status, answer = await call
        assert status == 503, answer
        assert answer == {"error": "mcpkit is shutting down: the request was not finished"}
        await asyncio.wait_for(dev.proc.wait(), scaled(10))
    out = "".join(dev.lines)
    assert "Exception in ASGI application" not in out and "timeout graceful" not in out, out
