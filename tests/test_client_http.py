"""HttpTransport and ClientSession against an in-process aiohttp server."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from mcpkit.client import ClientSession, ConnectionClosed, RequestTimeout, TransportError
from mcpkit.client.errors import InvalidResponse
from mcpkit.protocol.errors import MethodNotFound, UnsupportedProtocolVersion
from mcpkit.protocol.jsonrpc import Notification
from support import scaled

TOOLS = [
    {
        "name": "region_tool",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        },
    },
    {
        "name": "invalid_tool",
        "inputSchema": {"properties": {"n": {"type": "number", "x-mcp-header": "N"}}},
    },
]


class Recorder:
    def __init__(self) -> None:
        self.headers: list[dict[str, str]] = []
        self.peers: set[Any] = set()
        self.disconnected = asyncio.Event()


REC = web.AppKey("rec", Recorder)


def sse(*messages: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(m).encode() + b"\n\n" for m in messages)


def reply(rid: Any, **result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", **result}}


async def handle(request: web.Request) -> web.StreamResponse:
    rec = request.app[REC]
    rec.headers.append(dict(request.headers))
    rec.peers.add(request.transport.get_extra_info("peername") if request.transport else None)
    body = await request.json()
    rid, method, params = body["id"], body["method"], body.get("params", {})
    name = params.get("name")
    if method == "tools/list":
        return web.json_response(reply(rid, tools=TOOLS))
    if method == "resources/read":
        return web.json_response(reply(rid, contents=[]))
    if method == "server/discover":
        return web.json_response(reply(rid, supportedVersions=["2026-07-28"], capabilities={}))
    if method != "tools/call":
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return web.json_response({"jsonrpc": "2.0", "id": rid, "error": error}, status=404)
    if name == "stream":
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}
        await resp.write(b": keep-alive\n\n" + sse(note))
        await asyncio.sleep(0.01)
        final = json.dumps(reply(rid, content=[{"type": "text", "text": "done"}]), indent=1)
        await resp.write(
            b"".join(b"data: " + line.encode() + b"\r\n" for line in final.split("\n"))
        )
        await resp.write(b"\r\n")
        return resp
    if name in ("hang", "truncated"):
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x"}}
        await resp.write(sse(note))
        if name == "truncated":
            return resp
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            rec.disconnected.set()
            raise
        return resp
    if name == "unsupported":
        error = {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2027-01-01"], "requested": "2026-07-28"},
        }
        return web.json_response({"jsonrpc": "2.0", "id": rid, "error": error}, status=400)
    if name == "plain404":
        return web.Response(status=404, text="no MCP here")
    if name == "html":
        return web.Response(text="<html></html>", content_type="text/html")
    if name == "garbage":
        return web.Response(text="{not json", content_type="application/json")
    return web.json_response(reply(rid, content=[], echo=params.get("arguments")))


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, Recorder]]:
    app = web.Application()
    app[REC] = rec = Recorder()
    app.router.add_post("/mcp", handle)
    runner = web.AppRunner(app, shutdown_timeout=0.1, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield f"http://127.0.0.1:{port}/mcp", rec
    await runner.cleanup()


async def test_json_responses_and_standard_headers(server: tuple[str, Recorder]) -> None:
    url, rec = server
    async with ClientSession(url) as client:
        assert (await client.discover())["supportedVersions"] == ["2026-07-28"]
        await client.read_resource("file:///a b")
    first, second = rec.headers
    assert first["Accept"] == "application/json, text/event-stream"
    assert first["Content-Type"] == "application/json"
    assert first["MCP-Protocol-Version"] == "2026-07-28"
    assert first["Mcp-Method"] == "server/discover"
    assert "Mcp-Name" not in first
    assert second["Mcp-Method"] == "resources/read"
    assert second["Mcp-Name"] == "file:///a b"
    assert len(rec.peers) == 1  # one keep-alive connection reused


async def test_x_mcp_header_after_tools_list(server: tuple[str, Recorder]) -> None:
    url, rec = server
    async with ClientSession(url) as client:
        tools = await client.list_tools()
        assert [t["name"] for t in tools] == ["region_tool"]  # invalid_tool dropped
        result = await client.call_tool("region_tool", {"region": "Zürich"})
    assert result["echo"] == {"region": "Zürich"}
    call = rec.headers[-1]
    assert call["Mcp-Name"] == "region_tool"
    assert call["Mcp-Param-Region"] == "=?base64?WsO8cmljaA==?="


async def test_sse_response_with_notifications(server: tuple[str, Recorder]) -> None:
    url, _ = server
    seen: list[Notification] = []
    async with ClientSession(url, on_notification=seen.append) as client:
        result = await client.call_tool("stream")
    assert result["content"][0]["text"] == "done"
    assert [(n.method, n.params) for n in seen] == [("notifications/progress", {"progress": 1})]


async def test_stream_ending_without_response(server: tuple[str, Recorder]) -> None:
    url, _ = server
    async with ClientSession(url) as client:
        with pytest.raises(ConnectionClosed, match="before the response"):
            await client.call_tool("truncated")


@pytest.mark.timing
async def test_timeout_closes_the_stream(server: tuple[str, Recorder]) -> None:
    url, rec = server
    async with ClientSession(url, timeout=0.2) as client:
        with pytest.raises(RequestTimeout):
            await client.call_tool("hang")
        await asyncio.wait_for(rec.disconnected.wait(), scaled(5))  # the server saw the cancel
        assert (await client.discover())["capabilities"] == {}


async def test_error_status_with_json_rpc_body(server: tuple[str, Recorder]) -> None:
    url, _ = server
    async with ClientSession(url) as client:
        with pytest.raises(UnsupportedProtocolVersion) as info:
            await client.call_tool("unsupported")
        assert info.value.supported == ["2027-01-01"]
        assert info.value.http_status == 400
        with pytest.raises(MethodNotFound) as missing:
            await client.request("nope/nope")
        assert missing.value.http_status == 404


async def test_error_status_without_json_rpc_body(server: tuple[str, Recorder]) -> None:
    url, _ = server
    async with ClientSession(url) as client:
        with pytest.raises(TransportError) as info:
            await client.call_tool("plain404")
    assert info.value.status == 404
    assert "no MCP here" in str(info.value)


async def test_unexpected_bodies(server: tuple[str, Recorder]) -> None:
    url, _ = server
    async with ClientSession(url) as client:
        with pytest.raises(TransportError, match="text/html"):
            await client.call_tool("html")
        with pytest.raises(InvalidResponse):
            await client.call_tool("garbage")


async def test_connection_refused() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with ClientSession(f"http://127.0.0.1:{port}/mcp") as client:
        with pytest.raises(TransportError):
            await client.discover()
