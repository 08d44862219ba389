"""The Streamable HTTP app, in-process: answers, SSE, listen streams, cancellation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpkit import Context, Server
from support import AsgiClient, meta, rpc, scaled


async def test_discover(client: AsgiClient) -> None:
    r = await client.post(rpc("server/discover"))
    assert r.status == 200 and r.headers["content-type"] == "application/json"
    res = r.result
    assert res["resultType"] == "complete"  # BASE-07
    # B.1.4: a dual-era server lists every version it serves, the session era's too.
    assert res["supportedVersions"] == [
        "2026-07-28",
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
        "2024-11-05",
    ]
    assert set(res["capabilities"]) >= {"tools", "prompts", "resources", "completions"}  # DISC-05
    assert res["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcpkit-everything-server"
    assert isinstance(res["ttlMs"], int) and res["cacheScope"] in ("public", "private")  # DISC-04


async def test_lists_are_cacheable_and_deterministic(client: AsgiClient) -> None:
    for method, key in [
        ("tools/list", "tools"),
        ("prompts/list", "prompts"),
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
    ]:
        first = (await client.post(rpc(method))).result
        second = (await client.post(rpc(method, id=2))).result
        assert first == second  # TOOL-06
        assert first[key] and first["ttlMs"] >= 0 and first["cacheScope"] == "public"  # CACHE-01
    tools = (await client.post(rpc("tools/list"))).result["tools"]
    assert tools[0]["name"] == "test_simple_text"


async def test_read_is_private_by_default(client: AsgiClient) -> None:
    msg = rpc("resources/read", {"uri": "test://static-text"})
    res = (await client.post(msg)).result
    assert res["cacheScope"] == "private" and res["ttlMs"] == 0
    assert res["contents"][0]["text"] == "This is the content of the static text resource."


async def test_template_read(client: AsgiClient) -> None:
    res = (await client.post(rpc("resources/read", {"uri": "test://template/123/data"}))).result
    assert '"123"' in res["contents"][0]["text"]
    assert res["contents"][0]["mimeType"] == "application/json"


async def test_traversal_through_template_is_not_found(client: AsgiClient) -> None:
    r = await client.post(rpc("resources/read", {"uri": "test://template/..%2F..%2Fetc/data"}))
    assert r.code == -32602  # RES-16 / RES-18


async def test_progress_switches_to_sse(client: AsgiClient) -> None:
    msg = rpc("tools/call", {"name": "test_tool_with_progress"}, progressToken="tok")
    r = await client.post(msg)
    assert r.headers["content-type"] == "text/event-stream"
    assert r.headers["x-accel-buffering"] == "no"  # TR-HTTP-19
    notes = [m for m in r.messages if m.get("method") == "notifications/progress"]
    assert [n["params"]["progress"] for n in notes] == [0, 50, 100]
    assert all(n["params"]["progressToken"] == "tok" for n in notes)
    assert r.messages[-1]["id"] == 1 and r.messages[-1]["result"]["resultType"] == "complete"


async def test_no_progress_without_token(client: AsgiClient) -> None:
    r = await client.post(rpc("tools/call", {"name": "test_tool_with_progress"}))
    assert r.headers["content-type"] == "application/json"


async def test_logs_only_when_asked(client: AsgiClient) -> None:
    msg = rpc("tools/call", {"name": "test_tool_with_logging"})
    r = await client.post(msg)
    assert not [m for m in r.messages if m.get("method") == "notifications/message"]  # LOG
    msg = rpc(
        "tools/call",
        {"name": "test_tool_with_logging"},
        **{"io.modelcontextprotocol/logLevel": "info"},
    )
    r = await client.post(msg)
    assert len([m for m in r.messages if m.get("method") == "notifications/message"]) == 3
    msg = rpc(
        "tools/call",
        {"name": "test_tool_with_logging"},
        **{"io.modelcontextprotocol/logLevel": "error"},
    )
    r = await client.post(msg)
    assert not [m for m in r.messages if m.get("method") == "notifications/message"]


async def test_listen_acknowledges_and_filters(everything: Any, client: AsgiClient) -> None:
    tools_listen = rpc(
        "subscriptions/listen",
        {"notifications": {"toolsListChanged": True, "bogus": True}},
        id="L1",
    )
    prompts_listen = rpc(
        "subscriptions/listen", {"notifications": {"promptsListChanged": True}}, id="L2"
    )
    async with client.stream(tools_listen) as s1, client.stream(prompts_listen) as s2:
        ack = await s1.next()
        assert (
            isinstance(ack, dict) and ack["method"] == "notifications/subscriptions/acknowledged"
        )  # SUB-03
        assert ack["params"]["notifications"] == {"toolsListChanged": True}  # SUB-05
        assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L1"
        ack2 = await s2.next()
        assert isinstance(ack2, dict)
        assert len(everything.subscriptions) == 2
        await client.post(rpc("tools/call", {"name": "test_trigger_tool_change"}))
        note = await s1.next()
        assert isinstance(note, dict) and note["method"] == "notifications/tools/list_changed"
        assert note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L1"  # SUB-07
        assert s2.queue.empty()  # SUB-02: never a type the stream did not ask for
    assert len(everything.subscriptions) == 0  # closing the stream frees it


@pytest.mark.timing
async def test_listen_keepalive_and_graceful_close() -> None:
    server = Server("t")

    @server.tool()
    async def noop() -> str:
        """No-op."""
        return ""

    client = AsgiClient(server.http_app(keepalive_interval=0.01))
    async with client.stream(
        rpc("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=7)
    ) as s:
        await s.next()
        assert await s.next() == b": keep-alive"  # TR-HTTP-20
        server.subscriptions.close_all()
        final: Any = None
        while True:
            item = await s.next()
            if isinstance(item, dict):
                final = item
                break
        assert final["id"] == 7 and final["result"]["resultType"] == "complete"  # SUB-11
        assert final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7  # SUB-12


async def test_listen_rejects_bad_filter(client: AsgiClient) -> None:
    r = await client.post(rpc("subscriptions/listen", {"notifications": "all"}))
    assert (r.status, r.code) == (200, -32602)


async def test_disconnect_cancels_the_handler() -> None:
    server = Server("t")
    started, cancelled = asyncio.Event(), asyncio.Event()

    @server.tool()
    async def slow(ctx: Context) -> str:
        """Waits forever."""
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    client = AsgiClient(server.http_app())
    async with client.stream(rpc("tools/call", {"name": "slow"})) as s:
        await asyncio.wait_for(started.wait(), scaled(5))
    await asyncio.wait_for(cancelled.wait(), scaled(5))  # TR-HTTP-23
    assert s.status is None  # TR-HTTP-24: nothing was sent for it


async def test_pagination() -> None:
    server = Server("t", page_size=2)
    for i in range(5):
        server.tool(name=f"t{i}", description="x")(lambda: "")
    client = AsgiClient(server.http_app())
    names, cursor, pages = [], None, 0
    while True:
        params = {"cursor": cursor} if cursor is not None else {}
        res = (await client.post(rpc("tools/list", params))).result
        names += [t["name"] for t in res["tools"]]
        pages += 1
        cursor = res.get("nextCursor")
        if cursor is None:
            break
    assert names == [f"t{i}" for i in range(5)] and pages == 3


async def test_runtime_changes_reach_lists_and_listeners() -> None:
    server = Server("t")

    @server.tool()
    async def first() -> str:
        """First."""
        return ""

    client = AsgiClient(server.http_app())
    async with client.stream(
        rpc("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    ) as s:
        await s.next()
        server.tool(name="second", description="Second.")(lambda: "")
        note = await s.next()
        assert isinstance(note, dict) and note["method"] == "notifications/tools/list_changed"
    tools = (await client.post(rpc("tools/list"))).result["tools"]
    assert [t["name"] for t in tools] == ["first", "second"]
    server.remove_tool("first")
    tools = (await client.post(rpc("tools/list", id=3))).result["tools"]
    assert [t["name"] for t in tools] == ["second"]


async def test_completion(client: AsgiClient) -> None:
    msg = rpc(
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "test"},
        },
    )
    res = (await client.post(msg)).result
    assert res["completion"]["values"] == ["test1", "test2", "testing"]
    msg = rpc(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "arg1", "value": ""}},
    )
    assert (await client.post(msg)).code == -32602


async def test_prompt_get(client: AsgiClient) -> None:
    msg = rpc(
        "prompts/get",
        {"name": "test_prompt_with_arguments", "arguments": {"arg1": "A1", "arg2": "B2"}},
    )
    res = (await client.post(msg)).result
    text = res["messages"][0]["content"]["text"]
    assert "A1" in text and "B2" in text
    missing = rpc(
        "prompts/get", {"name": "test_prompt_with_arguments", "arguments": {"arg1": "A1"}}
    )
    assert (await client.post(missing)).code == -32602  # PRM-08


async def test_json_schema_2020_12_tool_validates(client: AsgiClient) -> None:
    ok = rpc(
        "tools/call",
        {"name": "json_schema_2020_12_tool", "arguments": {"name": "a", "email": "e@x"}},
    )
    assert "isError" not in (await client.post(ok)).result
    bad = rpc(
        "tools/call", {"name": "json_schema_2020_12_tool", "arguments": {"name": "a", "extra": 1}}
    )
    res = (await client.post(bad)).result
    assert res["isError"] is True


async def test_capabilities_follow_registration() -> None:
    server = Server("empty")
    client = AsgiClient(server.http_app())
    caps = (await client.post(rpc("server/discover"))).result["capabilities"]
    assert "tools" not in caps
    assert (await client.post(rpc("tools/list"))).status == 404  # not advertised → -32601
    assert (await client.post(rpc("subscriptions/listen", {"notifications": {}}))).code == -32601


async def test_meta_capabilities_are_per_request(client: AsgiClient) -> None:
    # BASE-24: an earlier request's capabilities never carry over.
    with_sampling = rpc("tools/call", {"name": "test_missing_capability"})
    with_sampling["params"]["_meta"] = meta({"sampling": {}})
    assert (await client.post(with_sampling)).status == 200
    assert (
        await client.post(rpc("tools/call", {"name": "test_missing_capability"}))
    ).code == -32021
