"""The 2025-11-25 session wire on the dual-era HTTP endpoint, in-process (CHECKLIST appendix B).

Each message the server sends here is recorded, and so checked against the 2025-11-25 schema
as it arrives (`wire_schemas`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from legacy_support import V25, Conn, SessionClient, init_message, session
from support import AsgiClient, Receive, asgi_scope, rpc, scaled

ALL_CAPS = {"sampling": {}, "elicitation": {}, "roots": {}}


@pytest.fixture
async def app(everything: Any) -> AsyncIterator[Any]:
    app = everything.http_app()
    yield app
    app.legacy.close()


def call(
    name: str, arguments: dict[str, Any] | None = None, id: Any = 1, **meta: Any
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


# -- lifecycle -----------------------------------------------------------------------------------
async def test_initialize_opens_a_session(app: Any) -> None:
    client = SessionClient(app)
    conn = await client.initialize({"sampling": {}})
    result = conn.json["result"]
    assert result["protocolVersion"] == V25  # VER-14: same version when served
    assert result["serverInfo"]["name"] == "mcpkit-everything-server"
    caps = result["capabilities"]
    assert caps["resources"] == {"subscribe": True, "listChanged": True}
    assert caps["tools"] == {"listChanged": True} and caps["logging"] == {}
    sid = client.session_id
    assert sid and all(0x21 <= ord(c) <= 0x7E for c in sid)  # visible ASCII only
    assert len(app.sessions) == 1
    assert (await client.request("ping"))["result"] == {}  # exactly {}
    await client.close()


async def test_version_negotiation(app: Any) -> None:
    old = SessionClient(app)
    assert (await old.initialize(version="2025-06-18")).json["result"]["protocolVersion"] == (
        "2025-06-18"
    )
    future = SessionClient(app)
    reply = await future.initialize(version="2099-01-01")
    assert reply.json["result"]["protocolVersion"] == V25  # our latest legacy version


async def test_initialize_with_bad_params_creates_no_session(app: Any) -> None:
    client = SessionClient(app)
    for params in ({}, {"protocolVersion": 1}, {"protocolVersion": V25, "capabilities": []}):
        msg = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": params}
        conn = await client.call(msg)
        assert conn.status == 400 and conn.json["error"]["code"] == -32602
        assert conn.json["id"] == 7 and "mcp-session-id" not in conn.headers
    assert len(app.sessions) == 0


async def test_requests_without_or_with_unknown_session(app: Any) -> None:
    client = SessionClient(app)
    conn = await client.call({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    assert conn.status == 400 and conn.json["id"] == 3  # session-era method without a session
    client.session_id = "no-such-session"
    conn = await client.call({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
    assert conn.status == 404 and conn.json["id"] == 4  # unknown id → 404: re-initialize
    assert len(app.sessions) == 0


async def test_delete_ends_the_session(app: Any) -> None:
    client = SessionClient(app)
    await client.initialize()
    assert (await client.delete()).status == 200
    assert len(app.sessions) == 0
    conn = await client.call({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert conn.status == 404
    assert (await client.delete()).status == 404


async def test_unsupported_protocol_version_header(app: Any) -> None:
    async with session(app) as client:
        conn = await client.call(
            {"jsonrpc": "2.0", "id": 1, "method": "ping"}, mcp_protocol_version="1999-01-01"
        )
        assert conn.status == 400  # 2025-11-25 transports: unsupported header → 400


async def test_second_initialize_is_refused(app: Any) -> None:
    async with session(app) as client:
        conn = await client.call(init_message(id=9))
        assert conn.json["error"]["code"] == -32600


async def test_modern_requests_stay_stateless_beside_sessions(app: Any) -> None:
    async with session(app):
        r = await AsgiClient(app).post(rpc("tools/call", {"name": "test_simple_text"}))
        assert r.status == 200 and r.result["resultType"] == "complete"
        assert "mcp-session-id" not in r.headers
        # Modern-only methods do not exist on the session wire.
    async with session(app) as client:
        reply = await client.request("server/discover")
        assert reply["error"]["code"] == -32601


# -- results and errors shaped for 2025-11-25 ------------------------------------------------------
async def test_results_carry_no_modern_members(app: Any) -> None:
    async with session(app) as client:
        for method, params in [
            ("tools/list", {}),
            ("prompts/list", {}),
            ("resources/list", {}),
            ("resources/templates/list", {}),
            ("resources/read", {"uri": "test://static-text"}),
            ("prompts/get", {"name": "test_simple_prompt"}),
            ("tools/call", {"name": "test_simple_text"}),
            (
                "completion/complete",
                {
                    "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                    "argument": {"name": "arg1", "value": "te"},
                },
            ),
        ]:
            result = (await client.request(method, params))["result"]
            assert not {"resultType", "ttlMs", "cacheScope"} & set(result), method
            assert "io.modelcontextprotocol/serverInfo" not in result.get("_meta", {}), method
        tools = (await client.request("tools/list"))["result"]["tools"]
        assert tools[0]["name"] == "test_simple_text"


async def test_unknown_resource_is_minus_32002(app: Any) -> None:
    async with session(app) as client:
        reply = await client.request("resources/read", {"uri": "test://nope"})
        assert reply["error"]["code"] == -32002  # RES-14: legacy code on the legacy wire
        assert reply["error"]["data"] == {"uri": "test://nope"}
    r = await AsgiClient(app).post(rpc("resources/read", {"uri": "test://nope"}))
    assert r.code == -32602  # BASE-20: never -32002 on the modern wire


async def test_set_level_and_logs(app: Any) -> None:
    async with session(app) as client:
        bad = await client.request("logging/setLevel", {"level": "loud"})
        assert bad["error"]["code"] == -32602
        assert (await client.request("logging/setLevel", {"level": "debug"}))["result"] == {}
        conn = await client.open(call("test_tool_with_logging"))
        assert conn.headers["content-type"] == "text/event-stream"
        messages = [await conn.next_message() for _ in range(4)]
        logs = [m for m in messages if m.get("method") == "notifications/message"]
        assert len(logs) == 3 and messages[-1]["result"]["content"][0]["text"]
        await client.request("logging/setLevel", {"level": "error"})
        conn = await client.call(call("test_tool_with_logging"))
        assert conn.headers["content-type"] == "application/json"  # nothing at error level


async def test_progress_on_the_request_stream_with_event_ids(app: Any) -> None:
    async with session(app) as client:
        conn = await client.open(call("test_tool_with_progress", progressToken="p-1"))
        priming = await conn.next()
        assert priming is not None and priming.data is None and priming.retry == 1000
        ids, notes = [priming.id], []
        while True:
            event = await conn.next()
            assert event is not None and event.data is not None
            ids.append(event.id)
            if "result" in event.data:
                break
            notes.append(event.data)
        assert [n["params"]["progress"] for n in notes] == [0, 50, 100]
        assert all(n["params"]["progressToken"] == "p-1" for n in notes)
        assert len(set(ids)) == len(ids)  # event ids unique in the session


# -- server → client requests ----------------------------------------------------------------------
async def answer(client: SessionClient, request: dict[str, Any], result: dict[str, Any]) -> None:
    reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
    assert (await client.call(reply)).status == 202


async def test_elicitation_is_a_real_request(app: Any) -> None:
    async with session(app, ALL_CAPS) as client:
        conn = await client.open(call("test_elicitation", {"message": "Who are you?"}))
        request = await conn.next_message()
        assert request["method"] == "elicitation/create"
        assert request["params"]["message"] == "Who are you?"
        assert request["params"]["requestedSchema"]["type"] == "object"
        await answer(
            client, request, {"action": "accept", "content": {"username": "ann", "email": "a@b"}}
        )
        final = await conn.next_message()
        assert '"username": "ann"' in final["result"]["content"][0]["text"]


async def test_sampling_and_roots(app: Any) -> None:
    async with session(app, ALL_CAPS) as client:
        conn = await client.open(call("test_sampling", {"prompt": "Capital of France?"}))
        request = await conn.next_message()
        assert request["method"] == "sampling/createMessage"
        assert request["params"]["maxTokens"] == 100
        reply = {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}
        await answer(client, request, reply)
        assert (await conn.next_message())["result"]["content"][0]["text"] == "LLM response: Paris"
        conn = await client.open(call("test_input_required_result_multiple_inputs"))
        asked = [await conn.next_message() for _ in range(3)]  # one round: all three at once
        assert {m["method"] for m in asked} == {
            "elicitation/create",
            "sampling/createMessage",
            "roots/list",
        }
        for m in asked:
            if m["method"] == "roots/list":
                await answer(client, m, {"roots": [{"uri": "file:///r", "name": "r"}]})
            elif m["method"] == "sampling/createMessage":
                await answer(client, m, reply)
            else:
                await answer(client, m, {"action": "decline"})
        text = (await conn.next_message())["result"]["content"][0]["text"]
        assert text == "name=decline, model='Paris', roots=1"


async def test_capability_is_checked_against_initialize(app: Any) -> None:
    async with session(app, {"sampling": {}}) as client:
        reply = await client.request(
            "tools/call", {"name": "test_elicitation", "arguments": {"message": "x"}}
        )
        assert reply["error"]["code"] == -32021  # ELIC-09: never ask what was not declared
        assert reply["error"]["data"]["requiredCapabilities"] == {"elicitation": {"form": {}}}


async def test_client_error_and_bad_answer(app: Any) -> None:
    async with session(app, ALL_CAPS) as client:
        conn = await client.open(call("test_elicitation", {"message": "?"}))
        request = await conn.next_message()
        error = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -1, "message": "no"}}
        assert (await client.call(error)).status == 202
        assert (await conn.next_message())["error"]["message"] == "no"
        conn = await client.open(call("test_elicitation", {"message": "?"}, id=2))
        request = await conn.next_message()
        await answer(client, request, {"action": "accept", "content": {"username": 5}})
        assert (await conn.next_message())["error"]["code"] == -32602  # validated (ELIC-31)


async def test_cancel_stops_the_handler(app: Any) -> None:
    async with session(app, ALL_CAPS) as client:
        conn = await client.open(call("test_elicitation", {"message": "?"}, id="c1"))
        request = await conn.next_message()
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": "c1"},
        }
        assert (await client.call(cancel)).status == 202
        # Our question is withdrawn, then the stream ends without a response.
        note = await conn.next_message()
        assert note["method"] == "notifications/cancelled"
        assert note["params"]["requestId"] == request["id"]
        assert await conn.next() is None
        assert not app.sessions.get(client.session_id).core.tasks


# -- streams: GET, resumption, polling ---------------------------------------------------------------
async def test_get_stream_carries_list_changes_and_subscribed_updates(
    everything: Any, app: Any
) -> None:
    async with session(app) as client:
        assert (await client.request("resources/subscribe", {"uri": "test://watched-resource"}))[
            "result"
        ] == {}
        stream = await client.open(None, http_method="GET")
        assert stream.status == 200 and stream.headers["content-type"] == "text/event-stream"
        priming = await stream.next()
        assert priming is not None and priming.id == "0-0"
        everything.notify_resource_updated("test://other")  # not subscribed: not sent
        everything.notify_resource_updated("test://watched-resource")
        everything.notify_tools_changed()
        first, second = await stream.next_message(), await stream.next_message()
        assert first == {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "test://watched-resource"},
        }
        assert second["method"] == "notifications/tools/list_changed"
        await client.request("resources/unsubscribe", {"uri": "test://watched-resource"})
        everything.notify_resource_updated("test://watched-resource")
        everything.notify_prompts_changed()
        assert (await stream.next_message())["method"] == "notifications/prompts/list_changed"


async def test_resume_after_disconnect_with_last_event_id(app: Any) -> None:
    async with session(app, ALL_CAPS) as client:
        conn = await client.open(call("test_elicitation", {"message": "?"}))
        priming = await conn.next()
        assert priming is not None
        question = await conn.next()
        assert question is not None and question.data is not None
        conn.disconnect.set()  # type: ignore[attr-defined]  # the network drops; no cancel
        await asyncio.wait_for(conn.task, scaled(5))  # type: ignore[attr-defined]
        await answer(client, question.data, {"action": "decline"})
        resumed = await client.open(
            None, http_method="GET", headers=client.headers(last_event_id=question.id)
        )
        final = await resumed.next_message()
        assert final["result"]["content"][0]["text"].startswith("User response: action=decline")
        assert await resumed.next() is None  # the stream ends after its response
        bad = await client.open(
            None, http_method="GET", headers=client.headers(last_event_id="9-9")
        )
        assert bad.status == 400


async def test_a_resumed_stream_stops_the_connection_that_carried_it(app: Any) -> None:
    """A GET with `Last-Event-ID` while the stream's first connection is still open takes the
    stream over: the old connection ends at once (not at its next keep-alive, 15 s), and the
    response goes out on the new one only, not on both."""
    async with session(app, ALL_CAPS) as client:
        old = await client.open(call("test_elicitation", {"message": "?"}))
        assert (await old.next()) is not None  # priming
        question = await old.next()
        assert question is not None and question.data is not None
        resumed = await client.open(
            None, http_method="GET", headers=client.headers(last_event_id=question.id)
        )
        assert await old.next() is None  # ended by the takeover, with nothing more on it
        await answer(client, question.data, {"action": "decline"})
        final = await resumed.next_message()
        assert final["result"]["content"][0]["text"].startswith("User response: action=decline")


async def test_tool_may_close_its_stream_for_polling(app: Any) -> None:
    async with session(app) as client:
        conn = await client.open(call("test_reconnection"))
        priming = await conn.next()
        assert priming is not None and priming.retry == 1000 and priming.data is None
        assert await conn.next() is None  # closed mid-call, no response (SEP-1699)
        resumed = await client.open(
            None, http_method="GET", headers=client.headers(last_event_id=priming.id)
        )
        final = await resumed.next_message()
        assert final["result"]["content"][0]["text"] == "Reconnection test completed"


async def test_concurrent_posts_on_one_session(app: Any) -> None:
    async with session(app) as client:
        replies = await asyncio.gather(
            *(client.request("tools/list", id=1000 + i) for i in range(3))
        )
        assert [r["id"] for r in replies] == [1000, 1001, 1002]


async def test_a_last_event_id_that_is_not_ascii_digits_is_refused(app: Any) -> None:
    """`Last-Event-ID: 0-\\xb2` (`²`, a digit to `str.isdigit` but not to `int`) is an id the
    server never handed out: 400 like any other, not a crash of the GET."""
    async with session(app) as client:
        scope = asgi_scope("GET", "/mcp", client.headers(), 0)
        scope["headers"].append((b"last-event-id", b"0-\xb2"))
        conn = Conn("GET")
        await asyncio.wait_for(app(scope, Receive(b""), conn.send), scaled(5))
        assert conn.status == 400 and "Last-Event-ID" in conn.json["error"]["message"]
