"""Benchmark adapter: mcpkit under the shared mcpbench harness (/work/shared/bench).

Contract tools: ``echo(text) -> text``, ``add(a, b) -> str(a + b)`` and, with ``--tools N``,
N-2 fillers ``tool_000 .. tool_NNN(query: str, limit: int = 10, verbose: bool = False)`` for the
tools/list figure. All tools are ``async def``. Public API only.

    python bench_server.py --transport http --port 8000 [--tools 100]
    python bench_server.py --transport stdio [--tools 100]      # or: --stdio
    python bench_server.py --transport http --port 8000 --mrtr  # + the MRTR tool `ask` (mrtr_bench.py)

HTTP is Streamable HTTP at /mcp (uvicorn + uvloop + httptools, one worker, JSON responses,
log level warning, no access log). Both eras: 2026-07-28 ("modern") and 2025-11-25 ("legacy").
"""

from __future__ import annotations

import argparse
import logging

from mcpkit import Context, Server, __version__

#: The form `ask` elicits (a JSON Schema object, as `ctx.elicit` accepts).
CONFIRM_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


def build(n_tools: int, mrtr: bool = False) -> Server:
    server = Server("mcpkit-bench", version=__version__)

    @server.tool()
    async def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool()
    async def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    for i in range(max(0, n_tools - 2)):

        async def filler(query: str, limit: int = 10, verbose: bool = False) -> str:
            return query

        server.tool(name=f"tool_{i:03d}", description=f"Filler tool number {i}.")(filler)

    if mrtr:

        @server.tool()
        async def ask(text: str, ctx: Context) -> str:
            """Ask the user to confirm (one elicitation, key "confirm"), then echo the text."""
            answer = await ctx.elicit("Confirm?", CONFIRM_SCHEMA, key="confirm")
            if answer.action == "accept" and (answer.content or {}).get("ok") is True:
                return text
            return f"not confirmed: {answer.action}"

    return server


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--transport", choices=["http", "stdio"], default="http")
    ap.add_argument("--stdio", action="store_true", help="same as --transport stdio")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--tools", type=int, default=2, help="total tools registered (>= 2)")
    ap.add_argument(
        "--mrtr",
        action="store_true",
        help="also register `ask(text, ctx)`, which elicits one answer (MRTR round trip)",
    )
    ap.add_argument(
        "--redis",
        metavar="URL",
        help="attach every shared part to this Redis (server.use_redis: bus, tasks, handles)",
    )
    a = ap.parse_args()

    logging.basicConfig(level=logging.WARNING)
    server = build(a.tools, mrtr=a.mrtr)
    if a.redis:
        server.use_redis(a.redis)
    if a.stdio or a.transport == "stdio":
        server.run("stdio")
    else:
        server.run("http", host=a.host, port=a.port)


if __name__ == "__main__":
    main()
