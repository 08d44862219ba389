"""`Client` against mcpkit servers: typed results, MRTR handlers, progress, listen, caching."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from mcpkit import Context, MCPError, Server
from mcpkit.client import Client, InvalidResponse
from mcpkit.client.cache import ResultCache
from mcpkit.client.inputs import Elicitation
from mcpkit.protocol.jsonrpc import Response
from support import ROOT, scaled


def make_server() -> Server:
    server = Server("client-tests", version="2.0")

    @server.tool()
    async def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @server.tool()
    async def greet(ctx: Context) -> str:
        """Asks a name, then a mood, then samples and lists roots."""
        name = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        mood = await ctx.elicit(
            "Mood?", {"type": "object", "properties": {"mood": {"type": "string"}}}
        )
        reply, roots = await ctx.gather(ctx.sample("Say hi", max_tokens=10), ctx.list_roots())
        return f"{name.content['name']} is {mood.content['mood']}; {reply.text}; {[r.uri for r in roots]}"

    @server.tool()
    async def slow(ctx: Context) -> str:
        """Reports progress."""
        for i in range(3):
            await ctx.report_progress(i + 1, 3, f"step {i + 1}")
        return "done"

    @server.resource("mem://doc", mime_type="text/plain")
    async def doc() -> str:
        return "the doc"

    @server.prompt()
    async def hello(who: str) -> str:
        """Say hello."""
        return f"Hello {who}"

    @server.completion()
    async def complete(
        ref: dict[str, Any], argument: dict[str, Any], context: dict[str, str]
    ) -> list[str]:
        return [w for w in ("world", "wonder", "zebra") if w.startswith(argument["value"])]

    return server


async def elicit(request: Elicitation) -> dict[str, Any]:
    field = next(iter((request.requested_schema or {})["properties"]))
    return {"action": "accept", "content": {field: "Ada" if field == "name" else "happy"}}


async def sample(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "hi!"}, "model": "test"}


async def test_typed_api_in_process() -> None:
    async with Client(make_server()) as client:
        assert client.era == "modern"
        info = await client.discover()
        assert (
            info.name == "client-tests" and info.version == "2.0" and "tools" in info.capabilities
        )
        tools = await client.list_tools()
        assert [t.name for t in tools] == ["add", "greet", "slow"]
        assert tools[0].output_schema == {"type": "integer"}
        result = await client.call_tool("add", {"a": 1, "b": 2})
        assert result.structured_content == 3 and result.text == "3" and not result.is_error
        assert (await client.read_resource("mem://doc")).text == "the doc"
        assert (await client.get_prompt("hello", {"who": "you"})).messages[0]["content"][
            "text"
        ] == "Hello you"
        completion = await client.complete({"type": "ref/prompt", "name": "hello"}, "who", "w")
        assert completion.values == ["world", "wonder"]
        assert [r.uri for r in await client.list_resources()] == ["mem://doc"]


async def test_mrtr_rounds_are_fulfilled_by_handlers() -> None:
    async with Client(
        make_server(), elicitation=elicit, sampling=sample, roots=["file:///work"]
    ) as client:
        result = await client.call_tool("greet")
        assert result.text == "Ada is happy; hi!; ['file:///work']"


async def test_missing_handler_is_a_clear_error() -> None:
    async with Client(make_server(), elicitation=elicit) as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("greet")  # the server needs sampling, which we did not declare
        assert info.value.code == -32021


async def test_capabilities_follow_handlers() -> None:
    tasks = {"io.modelcontextprotocol/tasks": {}}  # TASK-01: the client follows tasks itself
    assert Client(make_server()).session.capabilities == {"extensions": tasks}
    assert Client(make_server(), tasks=False).session.capabilities == {}
    c = Client(
        make_server(),
        elicitation=elicit,
        sampling=sample,
        roots=["file:///x"],
        url_elicitation=True,
    )
    assert c.session.capabilities == {
        "elicitation": {"form": {}, "url": {}},
        "sampling": {},
        "roots": {},
        "extensions": tasks,
    }


async def test_progress_callback() -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    async with Client(make_server()) as client:
        result = await client.call_tool("slow", progress=lambda p, t, m: seen.append((p, t, m)))
        assert result.text == "done"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_cache_and_invalidation() -> None:
    server = make_server()
    calls: list[str] = []
    async with Client(server) as client:
        original = client.transport.request

        async def counting(rid: Any, method: str, params: dict[str, Any]) -> Response:
            calls.append(method)
            return await original(rid, method, params)

        client.transport.request = counting  # type: ignore[method-assign]
        await client.list_tools()
        await client.list_tools()
        assert calls.count("tools/list") == 1  # ttlMs 60000, public (CACHE-07)
        await client.read_resource("mem://doc")
        await client.read_resource("mem://doc")
        assert calls.count("resources/read") == 2  # ttlMs 0: never reused (CACHE-06)
        async with client.subscribe(tools=True) as sub:
            assert sub.acknowledged == {"toolsListChanged": True}
            server.tool(name="extra", description="Extra.")(lambda: "")
            note = await asyncio.wait_for(sub.__anext__(), scaled(5))
            assert note.method == "notifications/tools/list_changed"
        assert [t.name for t in await client.list_tools()][-1] == "extra"  # CACHE-14
        assert calls.count("tools/list") == 2


def test_cache_scopes() -> None:
    now = [0.0]
    cache = ResultCache(clock=lambda: now[0])
    public = {"resultType": "complete", "ttlMs": 1000, "cacheScope": "public", "tools": []}
    private = {"resultType": "complete", "ttlMs": 1000, "cacheScope": "private", "contents": []}
    cache.put("tools/list", {}, "alice", public)
    cache.put("resources/read", {"uri": "x"}, "alice", private)
    assert cache.get("tools/list", {}, "bob") is public
    assert cache.get("resources/read", {"uri": "x"}, "alice") is private
    assert cache.get("resources/read", {"uri": "x"}, "bob") is None  # CACHE-11
    assert cache.get("resources/read", {"uri": "y"}, "alice") is None  # CACHE-03
    cache.put("resources/read", {"uri": "z", "requestState": "s"}, "alice", private)
    assert (
        cache.get("resources/read", {"uri": "z", "requestState": "s"}, "alice") is None
    )  # CACHE-04
    now[0] = 2.0
    assert cache.get("tools/list", {}, "bob") is None  # expired


async def test_output_schema_is_enforced() -> None:
    server = Server("liar")

    @server.tool(structured_output=False)
    async def count() -> dict[str, Any]:
        """Claims an integer, sends a string."""
        return {}

    server.tools["count"].definition["outputSchema"] = {"type": "object", "required": ["n"]}
    async with Client(server) as client:
        await client.list_tools()
        with pytest.raises(InvalidResponse, match="outputSchema"):
            await client.call_tool("count")  # TOOL-18


async def test_dead_server_fails_connect() -> None:
    code = "import sys; sys.stdin.readline(); sys.exit(3)"
    with pytest.raises(Exception) as info:
        async with (
            asyncio.timeout(scaled(10)),
            Client([sys.executable, "-c", code], timeout=scaled(30), stderr="discard"),
        ):
            pass
    assert "exited" in str(info.value) or "closed" in str(info.value).lower()


async def test_client_over_real_stdio_and_listen() -> None:
    async with Client([sys.executable, str(ROOT / "tests/servers/basic_server.py")]) as client:
        assert client.era == "modern"
        assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
        async with client.subscribe(tools=True) as sub:
            await client.call_tool("change")
            note = await asyncio.wait_for(sub.__anext__(), scaled(10))
            assert note.method == "notifications/tools/list_changed"
