"""The lean HTTP/1.1 pool behind `HttpTransport.request()` (client/h1.py): keep-alive reuse,
connections the server closed, `Connection: close`, redirects (left to aiohttp), header checks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from mcpkit.client import ClientSession
from mcpkit.client.h1 import H1Pool

PEERS = web.AppKey("peers", list)


def reply(rid: Any, **result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", **result}}


async def handle(request: web.Request) -> web.StreamResponse:
    request.app[PEERS].append(request.transport.get_extra_info("peername"))  # type: ignore[union-attr]
    body = await request.json()
    name = (body.get("params") or {}).get("name")
    if name == "moved" and request.path == "/mcp":
        raise web.HTTPTemporaryRedirect("/other")
    resp = web.json_response(reply(body["id"], content=[], path=request.path, name=name))
    if name == "close":
        resp.force_close()
    return resp


async def serve(keepalive: float) -> tuple[web.AppRunner, str, list[Any]]:
    app = web.Application()
    app[PEERS] = peers = []
    app.router.add_post("/mcp", handle)
    app.router.add_post("/other", handle)
    runner = web.AppRunner(app, shutdown_timeout=0.1, keepalive_timeout=keepalive)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}/mcp", peers


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, list[Any]]]:
    runner, url, peers = await serve(keepalive=75)
    yield url, peers
    await runner.cleanup()


async def test_one_connection_is_kept_alive(server: tuple[str, list[Any]]) -> None:
    url, peers = server
    async with ClientSession(url) as client:
        for _ in range(5):
            await client.call_tool("x")
    assert len(peers) == 5 and len(set(peers)) == 1


async def test_connection_close_is_not_reused(server: tuple[str, list[Any]]) -> None:
    url, peers = server
    async with ClientSession(url) as client:
        await client.call_tool("close")
        await client.call_tool("x")
    assert len(set(peers)) == 2


@pytest.mark.timing
async def test_a_connection_the_server_closed_is_replaced() -> None:
    runner, url, peers = await serve(keepalive=0.05)
    try:
        async with ClientSession(url) as client:
            await client.call_tool("x")
            # Idle time is what this tests: past the server's keep-alive (0.05 s), which drops
            # the connection, and past the pool's 0.1 s, after which it polls before reuse.
            await asyncio.sleep(0.3)
            result = await client.call_tool("x")
        assert result["name"] == "x" and len(set(peers)) == 2
    finally:
        await runner.cleanup()


async def test_redirects_are_followed_by_aiohttp(server: tuple[str, list[Any]]) -> None:
    url, _ = server
    async with ClientSession(url) as client:
        response = await client.request("tools/call", {"name": "moved"})
    assert response["path"] == "/other"


async def test_newlines_in_headers_are_refused() -> None:
    pool = H1Pool("http://127.0.0.1:9/mcp", connect_timeout=1, limit=1)
    with pytest.raises(ValueError, match="newline"):
        await pool.post({"X-Evil": "a\r\nInjected: 1"}, b"{}")


async def test_a_close_the_loop_has_not_read_yet_is_seen_before_reuse() -> None:
    """A POST written to a connection the server already closed would be lost, and must not
    be sent twice (RFC 9112 §9.3.1): an idle connection is polled before it is reused."""
    import socket

    from mcpkit.client.h1 import H1Connection, peer_closed

    ours, theirs = socket.socketpair()
    transport, _ = await asyncio.get_running_loop().create_connection(H1Connection, sock=ours)
    try:
        assert not peer_closed(transport)
        theirs.close()  # the FIN is there; the loop has not run since
        assert peer_closed(transport)
    finally:
        transport.close()
