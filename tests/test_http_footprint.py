"""What an HTTP server process loads to serve (`make bench`: peak RSS at most 45 MB). A real
server process, asked over a real socket which modules it holds after serving requests of both
eras: uvicorn's WebSocket library (about 2.4 MB resident), h11 (0.5 MB, only for uvicorn's h11
protocol) and the `email` parsers behind `importlib.metadata` (0.3 MB) are not among them."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson

from support import (
    LEGACY_HEADERS,
    free_port,
    headers_for,
    legacy_initialize,
    parse_body,
    rpc,
    scaled,
    wait_port,
)

SERVER = """
import sys
from mcpkit import Server

server = Server("footprint", version="1.0")

@server.tool()
async def loaded() -> str:
    \"\"\"The modules this process holds.\"\"\"
    return " ".join(sorted(sys.modules))

server.run("http", port=int(sys.argv[1]))
"""
#: Modules a plain MCP server over HTTP has no use for.
UNNEEDED = ("websockets", "wsproto", "h11", "email.parser", "email.feedparser")


@asynccontextmanager
async def http_server() -> AsyncIterator[tuple[int, asyncio.subprocess.Process]]:
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SERVER,
        str(port),
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "MCPKIT_LOG_LEVEL": "debug"},
    )
    try:
        await wait_port(port, proc)
        yield port, proc
    finally:
        if proc.returncode is None:
            proc.terminate()
        await asyncio.wait_for(proc.wait(), scaled(10))


async def exchange(port: int, head: str, body: bytes = b"") -> bytes:
    """One request on its own connection (`Connection: close`): the whole reply."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head.encode() + body)
    reply = await asyncio.wait_for(reader.read(), scaled(10))
    writer.close()
    return reply


async def post(port: int, message: dict[str, Any], headers: dict[str, str]) -> bytes:
    body = orjson.dumps(message)
    headers = {**headers, "host": "127.0.0.1", "content-length": str(len(body))}
    headers["connection"] = "close"
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return await exchange(port, f"POST /mcp HTTP/1.1\r\n{head}\r\n", body)


def modules_in(reply: bytes) -> set[str]:
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), reply
    content_type = next(
        line.split(b":", 1)[1].strip().decode()
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-type:")
    )
    (message,) = parse_body(content_type, body)
    return set(message["result"]["content"][0]["text"].split())


async def test_a_serving_http_server_holds_no_websocket_h11_or_email_modules() -> None:
    async with http_server() as (port, _):
        opened = await post(port, legacy_initialize(), LEGACY_HEADERS)
        assert opened.startswith(b"HTTP/1.1 200"), opened
        call = rpc("tools/call", {"name": "loaded"})
        loaded = modules_in(await post(port, call, headers_for(call)))
    assert "mcpkit.server.transports.http" in loaded  # the answer is the server's own
    assert sorted(m for m in loaded if m.split(".")[0] in UNNEEDED or m in UNNEEDED) == []


async def test_a_websocket_upgrade_is_served_as_plain_http_without_warnings() -> None:
    """uvicorn runs with `ws="none"`: an Upgrade request gets the endpoint's HTTP answer (405
    for a GET outside a session), and no warning telling the operator to install a library."""
    async with http_server() as (port, proc):
        reply = await exchange(
            port,
            "GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: Upgrade\r\nupgrade: websocket\r\n"
            "sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
        )
        assert reply.startswith(b"HTTP/1.1 405"), reply
        proc.terminate()
        assert proc.stderr is not None
        err = (await asyncio.wait_for(proc.stderr.read(), scaled(10))).decode()
    assert "WebSocket library" not in err and "Unsupported upgrade" not in err, err
    assert "served as plain HTTP" in err  # the one debug line
