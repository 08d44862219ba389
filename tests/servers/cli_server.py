"""The server the CLI tests drive: a string parameter (coercion), a resource, a prompt, a tool
that logs at three levels, and a tool that waits (Ctrl-C). `mcpkit run` serves it, or
`python cli_server.py [http PORT]` through `server.run()`."""

from __future__ import annotations

import asyncio
import sys

from mcpkit import Context, Server

server = Server("cli-test", version="0.1")


@server.tool()
def greet(city: str, times: int = 1) -> str:
    """Greet a city (city is a string: `city=123` must arrive as "123")."""
    return " ".join([f"hello {city} ({type(city).__name__})"] * times)


@server.tool()
async def chatty(ctx: Context) -> str:
    """Logs once at debug, info and warning."""
    await ctx.log("debug", "debug detail", logger="cli")
    await ctx.log("info", "info note", logger="cli")
    await ctx.log("warning", "warning sign", logger="cli")
    return "logged"


@server.tool()
async def wait(ctx: Context) -> str:
    """Reports progress, then waits for a minute (long enough to be interrupted)."""
    await ctx.report_progress(1, 2, "waiting")
    await asyncio.sleep(60)
    return "waited"


@server.resource("notes://today", mime_type="text/plain")
def today() -> str:
    return "buy milk"


@server.prompt()
def review(topic: str) -> str:
    """Ask for a review."""
    return f"Please review {topic}."


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("http", port=int(sys.argv[2]))
    else:
        server.run()
