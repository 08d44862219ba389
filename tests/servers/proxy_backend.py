"""A backend for the proxy and gateway tests: `python proxy_backend.py [--http PORT]` (stdio by
default), or import `build()` for an in-process one.

Tools: `echo`, `greet` (asks the user's name), `count` (progress), `hold` (waits until
cancelled, recording that it was), `job` (runs as a task when the client allows; asks a
question inside the task), `grow` (adds a tool: list_changed), `touch` (a resource update),
`whoami` (echoes a `customer_id` argument), `open_basket` / `basket` (a state handle),
`bump` (counts its runs; the server honours idempotency keys), `session` (the 2025-11-25
session id the call came on), `link` (a resource link), `chatty` (a log line, a sampling request, the roots). A resource, a template, a prompt and
completions.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from typing import Any

from mcpkit import Context, Server
from mcpkit.server.idempotency import MemoryIdempotencyStore

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def build(name: str = "proxy-backend") -> Server:
    server = Server(
        name,
        version="1.0",
        instructions=f"{name}: say hello.",
        idempotency=MemoryIdempotencyStore(),
    )
    bumps = itertools.count(1)
    server.cancelled = asyncio.Event()  # type: ignore[attr-defined]
    server.started = asyncio.Event()  # type: ignore[attr-defined]

    @server.tool()
    async def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool()
    async def greet(ctx: Context) -> str:
        """Greet the user by the name they give."""
        first = await ctx.elicit("What is your name?", NAME_FORM)
        if not first.accepted:
            return f"no name ({first.action})"
        second = await ctx.elicit(
            "And your city?",
            {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        )
        city = (second.content or {}).get("city", "?") if second.accepted else "?"
        return f"Hello {first.content['name']} from {city}!"  # type: ignore[index]

    @server.tool()
    async def count(n: int, ctx: Context) -> str:
        """Count to n, reporting progress."""
        for i in range(1, n + 1):
            await ctx.report_progress(i, n, f"step {i}")
        return f"counted to {n}"

    @server.tool()
    async def hold(ctx: Context) -> str:
        """Wait until cancelled."""
        server.started.set()  # type: ignore[attr-defined]
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            server.cancelled.set()  # type: ignore[attr-defined]
            raise
        return "never"

    @server.tool(task="optional")
    async def job(ctx: Context) -> str:
        """A long job: runs as a task, asks to go on half way."""
        ctx.set_status("half way")
        answer = await ctx.elicit(
            "Go on?",
            {"type": "object", "properties": {"go": {"type": "boolean"}}, "required": ["go"]},
        )
        go = answer.accepted and (answer.content or {}).get("go")
        return f"job done (task {ctx.task_id is not None}, go {go})"

    async def extra() -> str:
        """A tool that appears later."""
        return "extra"

    @server.tool()
    async def grow() -> str:
        """Add the `extra` tool."""
        if "extra" not in server.tools:
            server.tool()(extra)
        return "grown"

    @server.tool()
    async def touch() -> str:
        """Announce that notes://a changed."""
        server.notify_resource_updated("notes://a")
        return "touched"

    @server.tool()
    async def bump() -> str:
        """Count one more (a call with an effect: idempotency keys matter)."""
        return str(next(bumps))

    @server.tool()
    async def whoami(customer_id: str) -> str:
        """Say which customer the call is for."""
        return customer_id

    baskets = server.handles.kind("basket", ttl=600, start_over="call open_basket again")

    @server.tool()
    async def open_basket() -> dict[str, str]:
        """Open a basket; returns its id."""
        return {"basket_id": await baskets.create({"items": []})}

    @server.tool()
    async def basket(basket_id: str) -> dict[str, Any]:
        """Show a basket."""
        return await baskets.resolve(basket_id)  # type: ignore[no-any-return]

    @server.tool()
    async def session(ctx: Context) -> str:
        """The legacy session this call came on ("none" on the 2026-07-28 wire)."""
        own = getattr(ctx._inputs, "session", None)  # a session's input channel knows it
        return own.id if own is not None else "none"

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Log a line, ask the client's model, list its roots."""
        await ctx.info("chatty says hi")
        answer = await ctx.sample("Capital of France?", max_tokens=10)
        roots = await ctx.list_roots()
        return f"{answer.text} / {', '.join(r.uri for r in roots)}"

    @server.tool()
    async def link() -> list[Any]:
        """Point at the note."""
        return [{"type": "resource_link", "uri": "notes://a", "name": "a"}]

    @server.resource("notes://a", mime_type="text/plain")
    def note_a() -> str:
        return "note a"

    @server.resource("notes://items/{item}", mime_type="text/plain")
    def item(item: str) -> str:
        return f"item {item}"

    @server.prompt()
    def review(code: str) -> str:
        """Review some code."""
        return f"Please review: {code}"

    @server.completion()
    def complete(ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]) -> Any:
        return [v for v in ("python", "pytest", "rust") if v.startswith(argument["value"])]

    return server


if __name__ == "__main__":
    backend = build()
    if "--http" in sys.argv:
        backend.run("http", port=int(sys.argv[sys.argv.index("--http") + 1]))
    else:
        backend.run("stdio")
