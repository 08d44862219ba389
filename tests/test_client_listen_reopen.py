"""A listen stream that breaks without its final result is opened again (SUB-13): with
backoff, telling the caller what may have changed meanwhile (and invalidating caches)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from mcpkit.client import Client, StreamBroken
from processes import http_server
from support import ROOT, scaled
from tcp_proxy import TcpProxy

BUS = ROOT / "tests/servers/bus_server.py"
UPDATED = "notifications/resources/updated"


@pytest.fixture
async def proxy() -> AsyncIterator[TcpProxy]:
    """A server with no Redis (one process), behind a proxy whose connections can be cut."""
    async with http_server(BUS, "-", "1") as url:
        port = int(url.rsplit(":", 1)[1])
        async with TcpProxy(upstream=("127.0.0.1", port)) as proxy:
            yield proxy


async def test_a_broken_listen_stream_is_opened_again(proxy: TcpProxy) -> None:
    async with Client(proxy.url + "/mcp") as client:
        await client.list_tools()  # cached until a change is announced
        assert client.cache is not None and len(client.cache) == 1
        heard: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        async with client.subscribe(tools=True, resource_uris=["bus://changes"]) as sub:

            async def read() -> None:
                async for note in sub:
                    heard.put_nowait((note.method, (note.params or {}).get("uri", "")))

            reader = asyncio.create_task(read())
            await client.call_tool("change", {"name": "one"})
            assert await asyncio.wait_for(heard.get(), scaled(5)) == (UPDATED, "bus://changes/one")
            assert len(client.cache) == 1

            assert proxy.drop() >= 1  # the network path breaks under the stream
            # Opened again, and told what may have changed meanwhile.
            resync = {await asyncio.wait_for(heard.get(), scaled(10)) for _ in range(2)}
            assert resync == {
                ("notifications/tools/list_changed", ""),
                (UPDATED, "bus://changes"),
            }
            assert sub.reopened == 1
            assert len(client.cache) == 0  # the tools/list entry was invalidated
            await client.call_tool("change", {"name": "two"})
            assert await asyncio.wait_for(heard.get(), scaled(5)) == (UPDATED, "bus://changes/two")
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)


async def test_without_reopen_a_broken_stream_is_an_error(proxy: TcpProxy) -> None:
    async with (
        Client(proxy.url + "/mcp") as client,
        client.subscribe(resource_uris=["bus://changes"], reopen=False) as sub,
    ):
        proxy.drop()
        with pytest.raises(StreamBroken, match="broke off"):
            await anext(sub)
    assert sub.closed and sub.reopened == 0
