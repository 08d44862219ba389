"""The fuzz suite's server: a little of everything, dual-era, on stdio or HTTP.

    python fuzz_server.py stdio [--plant]
    python fuzz_server.py http PORT

`--plant` puts back, on purpose, the bug class the front door removed (a notification used
before its shape is checked: an unhashable `requestId` ends the process), so that a test can
show the fuzzer finds such a crash within its small budget.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import orjson

from mcpkit import Context, PromptMessage, Server, TaskStore, ToolError

logging.basicConfig(
    level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
)

server = Server("fuzz", version="1.0", tasks=TaskStore(ttl_seconds=60, max_tasks=50))
FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


@server.tool()
async def echo(text: str) -> str:
    """Echo the text."""
    return text


@server.tool()
def add(a: int, b: int = 1) -> int:
    """Add two integers (a sync tool: runs on a worker thread)."""
    return a + b


@server.tool()
async def chatty(ctx: Context, steps: int = 2) -> str:
    """Progress and logs on the request's stream."""
    for i in range(min(max(steps, 0), 5)):
        await ctx.report_progress(i + 1, 5)
        await ctx.info(f"step {i}")
    return "done"


@server.tool()
async def confirm(ctx: Context) -> str:
    """Asks the user (MRTR on the modern wire, a real request on a session)."""
    answer = await ctx.elicit("Sure?", FORM, key="sure")
    return answer.action


@server.tool()
async def refuse(reason: str = "no") -> str:
    """A tool's own failure."""
    raise ToolError(f"refused: {reason}")


@server.tool()
async def broken() -> str:
    """A tool that fails unexpectedly (logged by the server as a tool failure)."""
    raise RuntimeError("broken on purpose")


@server.tool(task="optional")
async def job(label: str = "x") -> str:
    """May run as a task."""
    return f"job {label}"


@server.resource("fuzz://static")
def static() -> str:
    return "static"


@server.resource("fuzz://items/{item}")
def item(item: str) -> str:
    return f"item {item}"


@server.prompt()
def greet(name: str) -> list[PromptMessage]:
    """A greeting."""
    return [PromptMessage("user", f"Hello {name}")]


@server.completion()
def complete(ref: Any, argument: Any, context: Any) -> list[str]:
    return ["alpha", "beta"]


def plant() -> None:
    from mcpkit.server.transports import stdio

    receive = stdio.StdioConnection.receive

    def careless(self: Any, line: bytes) -> None:
        try:
            msg = orjson.loads(line)
        except orjson.JSONDecodeError:
            msg = None
        if isinstance(msg, dict) and msg.get("method") == "notifications/cancelled":
            params = msg.get("params")
            if isinstance(params, dict):
                self.tasks.get(params.get("requestId"))  # unchecked: a list is unhashable
        receive(self, line)

    stdio.StdioConnection.receive = careless  # type: ignore[method-assign]


if __name__ == "__main__":
    if "--plant" in sys.argv:
        plant()
    if sys.argv[1] == "http":
        server.run("http", port=int(sys.argv[2]), log_level="warning")
    else:
        server.run("stdio")
