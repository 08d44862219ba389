"""A small server for transport tests: `python basic_server.py [--http PORT]`."""

from __future__ import annotations

import asyncio
import sys

from mcpkit import Context, Server

server = Server("basic", version="1.0")


@server.tool()
async def echo(text: str) -> str:
    """Echo the text."""
    return text


@server.tool()
async def noisy() -> str:
    """Prints to stdout, which must never reach the protocol stream (TR-STDIO-04)."""
    print("this is not an MCP message")
    return "quiet"


@server.tool()
async def slow(ctx: Context) -> str:
    """Waits until cancelled."""
    await ctx.report_progress(1)
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        print("slow: cancelled", file=sys.stderr, flush=True)
        raise
    return "finished"


@server.tool()
async def change() -> str:
    """Announces a tools/list_changed."""
    server.notify_tools_changed()
    return "changed"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run("http", port=int(sys.argv[2]))
    else:
        server.run("stdio")
