"""HTTP failures read the same on both client stacks (the lean `h1` pool and aiohttp, which
carries proxied, authorised and legacy traffic): what failed, named by how far the request got.
Proxy environment variables are honoured (the lean pool steps aside when a proxy applies)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import orjson
import pytest
from aiohttp import web

from mcpkit.client import (
    Client,
    ClientSession,
    ConnectFailed,
    StreamBroken,
    TransportError,
)
from support import scaled
from tcp_proxy import TcpProxy

STACKS = ["lean", "aiohttp"]


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


@contextlib.asynccontextmanager
async def stack(kind: str, env: pytest.MonkeyPatch) -> AsyncIterator[TcpProxy | None]:
    """`aiohttp`: through a forward proxy named by HTTP_PROXY, which only aiohttp speaks."""
    if kind == "lean":
        yield None
        return
    async with TcpProxy() as proxy:
        env.setenv("HTTP_PROXY", proxy.url)
        yield proxy


async def start(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
async def html_url() -> AsyncIterator[str]:
    """An endpoint that answers every POST with `200 text/html` (a captive portal, a proxy's
    error page, a web app at the wrong path)."""

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html>Welcome</html>", content_type="text/html")

    app = web.Application()
    app.router.add_post("/mcp", page)
    runner, url = await start(app)
    yield url
    await runner.cleanup()


@pytest.fixture
async def json_url() -> AsyncIterator[str]:
    async def answer(request: web.Request) -> web.Response:
        body = await request.json()
        result = {"resultType": "complete", "content": [], "name": body["params"].get("name")}
        return web.json_response({"jsonrpc": "2.0", "id": body["id"], "result": result})

    app = web.Application()
    app.router.add_post("/mcp", answer)
    runner, url = await start(app)
    yield url
    await runner.cleanup()


@pytest.mark.parametrize("kind", STACKS)
async def test_unexpected_content_type_is_named(
    kind: str, html_url: str, no_proxy_env: pytest.MonkeyPatch
) -> None:
    async with stack(kind, no_proxy_env) as proxy, ClientSession(html_url) as session:
        with pytest.raises(TransportError) as caught:
            await session.call_tool("x")
        if proxy is not None:
            assert proxy.heads  # it went through the proxy (aiohttp)
    assert str(caught.value) == (
        f"unexpected Content-Type 'text/html' in the HTTP 200 response from {html_url} "
        "(expected application/json or text/event-stream): is this an MCP endpoint?"
    )
    assert caught.value.status == 200


async def test_unexpected_content_type_on_the_legacy_path(
    html_url: str, no_proxy_env: pytest.MonkeyPatch
) -> None:
    """It used to read "the SSE stream closed before the response and cannot be resumed"."""
    with pytest.raises(TransportError, match="unexpected Content-Type 'text/html'"):
        async with Client(html_url, era="legacy", timeout=scaled(5)):
            pass


@contextlib.contextmanager
def refusing_port() -> Iterator[int]:
    """Bound (nobody else takes it) but not listening: connections are refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


@pytest.mark.parametrize("path", ["lean", "legacy"])
async def test_connection_refused_reads_the_same_on_both_stacks(
    path: str, no_proxy_env: pytest.MonkeyPatch
) -> None:
    with refusing_port() as port:
        url = f"http://127.0.0.1:{port}/mcp"
        era: Any = "legacy" if path == "legacy" else "modern"  # legacy: aiohttp only
        with pytest.raises(ConnectFailed) as caught:
            async with Client(url, era=era, timeout=scaled(5)):
                pass
    expected = (
        f"cannot connect to http://127.0.0.1:{port}: connection refused (is the server running?)"
    )
    assert str(caught.value) == expected


async def test_an_unreachable_proxy_is_connect_failed(
    json_url: str, no_proxy_env: pytest.MonkeyPatch
) -> None:
    with refusing_port() as port:
        no_proxy_env.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
        with pytest.raises(ConnectFailed, match=f"the proxy 127.0.0.1:{port} is unreachable"):
            async with ClientSession(json_url) as session:
                await session.call_tool("x")


@pytest.fixture
async def cut_url() -> AsyncIterator[tuple[str, list[bytes]]]:
    """Answers with a head promising 100 bytes, sends 10 and closes: a body cut short."""
    seen: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            seen.append(await reader.readexactly(length))
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100\r\n\r\n" + b'{"jsonrpc"'
            )
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/mcp", seen
    server.close()


@pytest.mark.parametrize("kind", STACKS)
async def test_a_body_cut_short_is_stream_broken_and_resent_once(
    kind: str, cut_url: tuple[str, list[bytes]], no_proxy_env: pytest.MonkeyPatch
) -> None:
    url, seen = cut_url
    async with stack(kind, no_proxy_env), ClientSession(url) as session:
        with pytest.raises(StreamBroken) as caught:
            await session.call_tool("x")
    origin = url.removesuffix("/mcp")
    assert str(caught.value) == f"the response from {origin} broke off before its end"
    ids = [orjson.loads(body)["id"] for body in seen]
    assert len(ids) == 2 and ids[0] != ids[1]  # TR-HTTP-22: re-sent once, with a new id


async def test_proxy_variables_are_honoured(
    json_url: str, no_proxy_env: pytest.MonkeyPatch
) -> None:
    async with TcpProxy() as proxy:
        no_proxy_env.setenv("http_proxy", proxy.url)
        async with Client(json_url, era="modern") as client:
            assert client.transport.proxy == proxy.url  # type: ignore[attr-defined]
            await client.call_tool("x")
        assert len(proxy.heads) == 2  # server/discover and tools/call, in absolute form
        assert all(h.startswith(b"POST " + json_url.encode()) for h in proxy.heads)
        no_proxy_env.setenv("NO_PROXY", "localhost,127.0.0.1")
        async with Client(json_url, era="modern") as client:
            assert client.transport.proxy is None  # type: ignore[attr-defined]
            await client.call_tool("x")
        assert len(proxy.heads) == 2  # nothing more went through the proxy


@pytest.mark.parametrize("path", ["lean", "legacy"])
async def test_a_name_that_does_not_resolve_is_connect_failed(
    path: str, no_proxy_env: pytest.MonkeyPatch
) -> None:
    era: Any = "legacy" if path == "legacy" else "modern"
    with pytest.raises(ConnectFailed) as caught:  # .invalid never resolves (RFC 6761)
        async with Client("http://mcp.invalid/mcp", era=era, timeout=scaled(20)):
            pass
    assert str(caught.value).startswith(
        "cannot connect to http://mcp.invalid: the host name does not resolve"
    )
