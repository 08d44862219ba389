"""The client follows tasks (TASK-04, 09, 11, 14): `call_tool` returns the task's result."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpkit import Context, InternalError, MCPError, Server, TaskStore
from mcpkit.client import Client, TaskCancelled
from mcpkit.client.errors import InvalidResponse
from mcpkit.client.tasks import follow_task
from support import scaled, until

CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def make_server(release: asyncio.Event) -> Server:
    server = Server("client-tasks", tasks=TaskStore(poll_interval_ms=10))

    @server.tool(task="optional")
    async def job(n: int) -> str:
        await release.wait()
        return f"n={n}"

    @server.tool(task="optional")
    async def confirm(ctx: Context) -> str:
        first, second = await ctx.gather(
            ctx.elicit("One?", CONFIRM, key="one"), ctx.elicit("Two?", CONFIRM, key="two")
        )
        return f"{first.content['ok']}/{second.content['ok']}"

    @server.tool(task="optional")
    async def broken() -> str:
        raise InternalError("the backend is down")

    @server.tool(task="optional")
    async def gives_up() -> str:
        raise asyncio.CancelledError

    return server


async def test_call_tool_returns_the_task_result() -> None:
    release = asyncio.Event()
    server = make_server(release)
    async with Client(server) as client:
        call = asyncio.create_task(client.call_tool("job", {"n": 3}))
        await until_one_task(server)
        release.set()
        assert (await call).text == "n=3"


async def test_task_input_is_answered_once_per_key() -> None:
    asked: list[str] = []

    def elicit(q: Any) -> dict[str, Any]:
        asked.append(q.message)
        return {"action": "accept", "content": {"ok": q.message == "One?"}}

    async with Client(make_server(asyncio.Event()), elicitation=elicit) as client:
        assert (await client.call_tool("confirm")).text == "True/False"
    assert sorted(asked) == ["One?", "Two?"]  # TASK-11: each question shown once


async def test_failed_task_raises_its_error() -> None:
    async with Client(make_server(asyncio.Event())) as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("broken")
    assert info.value.code == -32603 and "backend" in str(info.value)


async def test_cancelled_task_raises_task_cancelled() -> None:
    async with Client(make_server(asyncio.Event())) as client:
        with pytest.raises(TaskCancelled):
            await client.call_tool("gives_up")


async def test_cancelling_the_call_cancels_the_task() -> None:
    server = make_server(asyncio.Event())
    async with Client(server) as client:
        call = asyncio.create_task(client.call_tool("job", {"n": 1}))
        task_id = await until_one_task(server)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        record = await until(server, task_id, lambda r: r.status == "cancelled")  # TASK-14
        assert record.status == "cancelled"


async def test_without_the_extension_the_call_is_plain() -> None:
    release = asyncio.Event()
    release.set()
    server = make_server(release)
    async with Client(server, tasks=False) as client:
        assert (await client.call_tool("job", {"n": 2})).text == "n=2"
    assert len(server.tasks) == 0


async def test_a_task_without_an_id_is_invalid() -> None:
    async def send(method: str, params: Any) -> Any:
        raise AssertionError("never polled")

    with pytest.raises(InvalidResponse):
        await follow_task({"resultType": "task"}, send, send)


async def until_one_task(server: Server) -> str:
    """The id of the server's only task, once the client's call has created it."""
    created = asyncio.Event()
    previous = server.tasks.on_change
    server.tasks.on_change = lambda record: (previous(record), created.set())  # type: ignore[func-returns-value]
    try:
        while len(server.tasks) == 0:
            await asyncio.wait_for(created.wait(), scaled(5))
            created.clear()
    finally:
        server.tasks.on_change = previous
    return next(iter(server.tasks)).id
