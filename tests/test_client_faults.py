"""Slow and silent peers: a server that starts slower than the era probe still connects, ids never
repeat on a connection, and every request (the probe and `initialize` included) has a deadline."""

from __future__ import annotations

import asyncio
import logging
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from host_support import RecordingUI
from mcpkit import Context, Server
from mcpkit.client import Client, ClientError, ConnectFailed, RequestTimeout
from mcpkit.client.era import ERA_CACHE
from mcpkit.host import ConsentPolicy, Fleet, parse_config
from mcpkit.host.supervision import LinkState
from support import ROOT, scaled

pytestmark = pytest.mark.timing

SLOW = str(ROOT / "tests/servers/slow_server.py")


def slow_command(kind: str, delay: float) -> list[str]:
    # A unique last argument: the era cache is per command, and this test must probe.
    return [sys.executable, SLOW, kind, str(delay), uuid.uuid4().hex]


@pytest.mark.parametrize("kind", ["legacy", "modern", "modern-only"])
async def test_a_server_slower_than_the_probe_connects(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """TR-STDIO-16: no answer to `server/discover` within the probe → `initialize`, with a new id
    (the probe's late answer, when it comes, is for an abandoned request: discarded)."""
    caplog.set_level(logging.DEBUG, logger="mcpkit.client")
    command = slow_command(kind, 1.5)
    async with asyncio.timeout(scaled(30)):
        async with Client(command, probe_timeout=0.3, stderr="capture") as client:
            result = await client.call_tool("echo", {"text": "hi"})
    assert result.text == "hi"
    if kind == "legacy":
        assert client.era == "legacy"
        assert "late response" in caplog.text  # the probe's -32601, logged at debug
    if kind == "modern-only":
        # initialize was refused with -32022 naming modern versions (VER-12): modern after all.
        assert client.era == "modern"


async def test_ids_are_unique_across_the_probe_and_the_legacy_session() -> None:
    seen: list[Any] = []
    command = slow_command("legacy", 1.0)
    async with Client(command, probe_timeout=0.2, stderr="capture") as client:
        send = client.transport.request  # type: ignore[attr-defined]

        async def spy(request_id: Any, method: str, params: Any) -> Any:
            seen.append(request_id)
            return await send(request_id, method, params)

        client.transport.request = spy  # type: ignore[method-assign]
        for _ in range(3):
            await client.call_tool("echo", {"text": "x"})
    assert len(set(seen)) == len(seen) == 3
    assert min(seen) > 2  # 1 was the probe, 2 `initialize`


async def test_a_host_config_of_many_slow_servers_all_connect() -> None:
    """Every server slower than the host client's default probe (5 s), started at once."""
    kinds = ["legacy", "modern", "modern-only"] * 3
    servers = {
        f"s{i}": {
            "command": sys.executable,
            "args": slow_command(kind, 5.5)[1:],
            "timeout": scaled(30),
        }
        for i, kind in enumerate(kinds)
    }
    ui = RecordingUI()
    fleet = Fleet(parse_config({"mcpServers": servers}), ui, ConsentPolicy())
    try:
        async with asyncio.timeout(scaled(60)):
            await fleet.start()  # until every server has connected or failed once
        states = {name: (link.state, link.detail) for name, link in fleet.links.items()}
        assert all(state is LinkState.READY for state, _ in states.values()), states
        assert all([t.name for t in link.tools] == ["echo"] for link in fleet.links.values())
        assert not ui.of("warn")
    finally:
        await fleet.close()


@pytest.fixture
async def mute_url() -> AsyncIterator[str]:
    """An HTTP server that accepts connections, reads the requests and never answers."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        while await reader.read(65536):
            pass

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}/mcp"
    for writer in held:
        writer.close()
    server.close()


@pytest.mark.parametrize("how", ["era=modern", "cached era", "auto"])
async def test_a_mute_http_server_fails_connect_within_the_timeout(mute_url: str, how: str) -> None:
    era: Any = "modern" if how == "era=modern" else "auto"
    if how == "cached era":
        ERA_CACHE[mute_url] = "modern"
    loop = asyncio.get_running_loop()
    start = loop.time()
    with pytest.raises(RequestTimeout):
        async with asyncio.timeout(scaled(10)):  # main hung here forever
            async with Client(mute_url, era=era, timeout=0.5, probe_timeout=0.3):
                pass
    assert loop.time() - start < scaled(3)
    assert mute_url not in ERA_CACHE  # a failed guess is probed again next time (VER-11)


async def test_a_command_that_cannot_start_is_connect_failed() -> None:
    with pytest.raises(ConnectFailed, match="cannot start"):
        async with Client(["/nonexistent/mcp-server"], timeout=2):
            pass
    assert issubclass(ConnectFailed, ClientError)


def progressing_server() -> Server:
    server = Server("progress")

    @server.tool()
    async def work(ctx: Context, steps: int) -> str:
        """Reports progress every 0.1 s."""
        for n in range(steps):
            await asyncio.sleep(0.1)
            await ctx.report_progress(n + 1, steps)
        return "done"

    return server


async def test_progress_restarts_the_timeout_under_an_overall_maximum() -> None:
    """CANC-08: with max_timeout, each progress notification restarts `timeout`."""
    seen: list[float] = []
    async with Client(progressing_server()) as client:
        result = await client.call_tool(
            "work",
            {"steps": 8},
            timeout=0.5,
            max_timeout=10,
            progress=lambda value, total, message: seen.append(value),
        )
        assert result.text == "done" and seen == [1, 2, 3, 4, 5, 6, 7, 8]  # 0.8 s in all
        with pytest.raises(RequestTimeout, match=r"within 0\.5 s"):
            await client.call_tool("work", {"steps": 8}, timeout=0.5)  # no restarts
        with pytest.raises(RequestTimeout, match=r"overall maximum of 0\.65 s"):
            await client.call_tool("work", {"steps": 8}, timeout=0.5, max_timeout=0.65)
