"""The tasks-extension tools of the conformance "everything" server (FIXTURE.md §8.1).

Public mcpkit API only: `task=` on `@server.tool`, `ctx.run_as_task()`, `ctx.elicit`.
"""

from __future__ import annotations

import asyncio

from mcpkit import Context, InternalError, Server, ToolError

CONFIRM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}},
    "required": ["confirm"],
}
NAMED = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}},
}


def register(server: Server) -> None:
    @server.tool()
    def greet(name: str) -> str:
        """Greets synchronously (never a task)."""
        return f"Hello, {name}!"

    @server.tool(task="optional")
    async def slow_compute(seconds: float, label: str = "") -> str:
        """Sleeps `seconds`, then reports; a task for clients with the tasks extension."""
        await asyncio.sleep(seconds)
        return f"Computed {label or 'result'} after {seconds:g}s"

    @server.tool(task="required")
    async def failing_job() -> str:
        """Always ends with a tool error (a completed task whose result has isError)."""
        await asyncio.sleep(0.5)
        raise ToolError("The job failed: the input data is invalid")

    @server.tool(task="optional")
    async def protocol_error_job() -> str:
        """Ends with a JSON-RPC error (a failed task)."""
        await asyncio.sleep(0.1)
        raise InternalError("The job hit an internal error")

    @server.tool(task="optional")
    async def confirm_delete(filename: str, ctx: Context) -> str:
        """Asks the user to confirm before deleting (the task waits in input_required)."""
        answer = await ctx.elicit(f"Delete {filename}?", CONFIRM)
        if answer.accepted and (answer.content or {}).get("confirm"):
            return f"Deleted {filename}"
        return f"Kept {filename}"

    @server.tool(task="optional")
    async def multi_input(ctx: Context) -> str:
        """Asks two questions at once; either may be answered first."""
        first, second = await ctx.gather(
            ctx.elicit("First name?", NAMED, key="first"),
            ctx.elicit("Second name?", NAMED, key="second"),
        )
        names = [(a.content or {}).get("name", "?") for a in (first, second)]
        return "Got " + " and ".join(names)

    @server.tool(task="required", task_start="handler")
    async def test_tool_with_task(ctx: Context) -> str:
        """Asks for the user's name in the request, then goes on as a task."""
        answer = await ctx.elicit("What is your name?", NAMED, key="user_name")
        name = (answer.content or {}).get("name", "stranger")
        await ctx.run_as_task()
        await asyncio.sleep(0.2)
        return f"Hello, {name}, from a task!"
