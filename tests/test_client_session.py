"""ClientSession over an in-memory transport: _meta, ids, results, errors, timeouts."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from mcpkit.client import ClientSession, InvalidResponse, RequestTimeout
from mcpkit.client.errors import ClientError, TransportError
from mcpkit.protocol.errors import HeaderMismatch, InvalidParams, MCPError
from mcpkit.protocol.jsonrpc import JSONObject, RequestId, Response
from mcpkit.protocol.transport import TransportCapabilities
from mcpkit.protocol.versions import (
    LATEST,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
)

Handler = Callable[[RequestId, str, JSONObject], Any]


class FakeTransport:
    """Answers from `handler(id, method, params)`: a result dict, a Response, or raises."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.sent: list[tuple[RequestId, str, JSONObject]] = []
        self.started = self.closed = False
        self.accepted: list[list[JSONObject]] = []
        self.capabilities = TransportCapabilities(accept_tools=self.accept_tools)

    async def start(self) -> None:
        self.started = True

    async def request(self, request_id: RequestId, method: str, params: JSONObject) -> Response:
        self.sent.append((request_id, method, params))
        answer = self.handler(request_id, method, params)
        if asyncio.iscoroutine(answer):
            answer = await answer
        if isinstance(answer, Response):
            return answer
        return Response(request_id, answer)

    def accept_tools(self, tools: list[JSONObject]) -> list[JSONObject]:
        self.accepted.append(tools)
        return [t for t in tools if t.get("name") != "hidden"]

    async def close(self) -> None:
        self.closed = True


def ok(**fields: Any) -> JSONObject:
    return {"resultType": "complete", **fields}


async def test_context_manager_starts_and_closes() -> None:
    transport = FakeTransport(lambda *_: ok())
    async with ClientSession(transport) as client:
        assert transport.started and not transport.closed
        assert client.transport is transport
    assert transport.closed


async def test_every_request_carries_meta_and_monotonic_ids() -> None:
    transport = FakeTransport(lambda *_: ok(tools=[]))
    async with ClientSession(transport, capabilities={"elicitation": {}}) as client:
        await client.discover()
        await client.list_tools()
        await client.request("custom/x", {"a": 1, "_meta": {"progressToken": "p"}})
    ids = [rid for rid, _, _ in transport.sent]
    assert ids == [1, 2, 3]
    for _, _, params in transport.sent:
        meta = params["_meta"]
        assert meta[META_PROTOCOL_VERSION] == LATEST
        assert meta[META_CLIENT_CAPABILITIES] == {"elicitation": {}}
        assert meta[META_CLIENT_INFO]["name"] == "mcpkit"
        assert isinstance(meta[META_CLIENT_INFO]["version"], str)
    assert transport.sent[2][2]["a"] == 1
    assert transport.sent[2][2]["_meta"]["progressToken"] == "p"


async def test_default_capabilities_are_empty_and_client_info_can_be_set() -> None:
    transport = FakeTransport(lambda *_: ok())
    async with ClientSession(transport, client_info={"name": "app", "version": "2"}) as client:
        await client.discover()
    meta = transport.sent[0][2]["_meta"]
    assert meta[META_CLIENT_CAPABILITIES] == {}
    assert meta[META_CLIENT_INFO] == {"name": "app", "version": "2"}


async def test_method_params_shapes() -> None:
    transport = FakeTransport(lambda *_: ok())
    async with ClientSession(transport) as client:
        await client.call_tool("add", {"a": 1})
        await client.read_resource("mem://x")
        await client.get_prompt("greet", {"who": "you"})
        await client.get_prompt("bare")
    sent = [(m, {k: v for k, v in p.items() if k != "_meta"}) for _, m, p in transport.sent]
    assert sent == [
        ("tools/call", {"name": "add", "arguments": {"a": 1}}),
        ("resources/read", {"uri": "mem://x"}),
        ("prompts/get", {"name": "greet", "arguments": {"who": "you"}}),
        ("prompts/get", {"name": "bare"}),
    ]


async def test_pagination_follows_cursors_including_empty_string() -> None:
    pages = {None: (["a"], ""), "": (["b", "hidden"], "c2"), "c2": (["c"], None)}

    def handler(_: RequestId, method: str, params: JSONObject) -> JSONObject:
        names, nxt = pages[params.get("cursor")]
        result = ok(tools=[{"name": n} for n in names])
        if nxt is not None:
            result["nextCursor"] = nxt
        return result

    transport = FakeTransport(handler)
    async with ClientSession(transport) as client:
        tools = await client.list_tools()
    assert [t["name"] for t in tools] == ["a", "b", "c"]  # "hidden" dropped by the transport
    assert ["cursor" in p for _, _, p in transport.sent] == [False, True, True]
    assert len(transport.accepted) == 3


@pytest.mark.parametrize(
    ("method", "key"),
    [
        ("list_resources", "resources"),
        ("list_prompts", "prompts"),
        ("list_resource_templates", "resourceTemplates"),
    ],
)
async def test_other_lists(method: str, key: str) -> None:
    transport = FakeTransport(lambda *_: ok(**{key: [{"name": "x"}]}))
    async with ClientSession(transport) as client:
        assert await getattr(client, method)() == [{"name": "x"}]
    assert transport.accepted == []  # only tools go through accept_tools


async def test_repeated_cursor_is_an_invalid_response() -> None:
    transport = FakeTransport(lambda *_: ok(tools=[], nextCursor="same"))
    async with ClientSession(transport) as client:
        with pytest.raises(InvalidResponse):
            await client.list_tools()


async def test_missing_list_is_an_invalid_response() -> None:
    transport = FakeTransport(lambda *_: ok())
    async with ClientSession(transport) as client:
        with pytest.raises(InvalidResponse):
            await client.list_prompts()


async def test_result_types() -> None:
    results: list[Any] = [
        {"legacy": True},  # no resultType: complete (BASE-10)
        ok(x=1),
        {"resultType": "input_required", "inputRequests": {}},
        {"resultType": "task"},
        ["not", "an", "object"],
    ]
    transport = FakeTransport(lambda *_: results.pop(0))
    async with ClientSession(transport) as client:
        assert await client.request("a") == {"legacy": True}
        assert (await client.request("a"))["x"] == 1
        # input_required goes back to the caller: `Client` fulfils it (MRTR).
        assert (await client.request("a"))["resultType"] == "input_required"
        with pytest.raises(InvalidResponse, match="task"):
            await client.request("a")  # "task" only where the tasks extension was declared
        with pytest.raises(InvalidResponse):
            await client.request("a")
    tasks = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    transport = FakeTransport(lambda *_: {"resultType": "task", "taskId": "t"})
    async with ClientSession(transport, capabilities=tasks) as client:
        assert (await client.request("tools/call"))["taskId"] == "t"


async def test_error_responses_raise_the_matching_mcp_error() -> None:
    error = {"code": -32602, "message": "Unknown tool: nope", "data": {"x": 1}}
    transport = FakeTransport(lambda rid, *_: Response(rid, error=error))
    async with ClientSession(transport) as client:
        with pytest.raises(InvalidParams) as info:
            await client.call_tool("nope")
    assert info.value.message == "Unknown tool: nope"
    assert info.value.data == {"x": 1}
    assert not isinstance(info.value, ClientError)


async def test_mismatched_response_id() -> None:
    transport = FakeTransport(lambda rid, *_: Response(999, ok()))
    async with ClientSession(transport) as client:
        with pytest.raises(InvalidResponse, match="999"):
            await client.discover()


@pytest.mark.timing
async def test_timeout_is_a_client_error_not_an_mcp_error() -> None:
    cancelled = asyncio.Event()

    async def slow(*_: Any) -> JSONObject:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return ok()

    transport = FakeTransport(slow)
    async with ClientSession(transport, timeout=0.05) as client:
        with pytest.raises(RequestTimeout) as info:
            await client.discover()
        assert cancelled.is_set()  # the transport saw the cancellation
        assert isinstance(info.value, TimeoutError)
        assert not isinstance(info.value, MCPError)
        # a per-request override
        transport.handler = lambda *_: ok(fast=True)
        assert (await client.request("x", timeout=None))["fast"] is True


async def test_transport_errors_propagate() -> None:
    def broken(*_: Any) -> JSONObject:
        raise TransportError("HTTP 502 Bad Gateway", status=502)

    async with ClientSession(FakeTransport(broken)) as client:
        with pytest.raises(TransportError) as info:
            await client.discover()
    assert info.value.status == 502


async def test_header_mismatch_refreshes_tools_and_retries_once() -> None:
    calls: list[str] = []

    def handler(rid: RequestId, method: str, params: JSONObject) -> Any:
        calls.append(method)
        if method == "tools/list":
            return ok(tools=[{"name": "t"}])
        if calls.count("tools/call") == 1:
            return Response(rid, error={"code": -32020, "message": "Header mismatch"})
        return ok(content=[])

    async with ClientSession(FakeTransport(handler)) as client:
        assert await client.call_tool("t", {}) == ok(content=[])
    assert calls == ["tools/call", "tools/list", "tools/call"]


async def test_header_mismatch_twice_is_raised() -> None:
    def handler(rid: RequestId, method: str, params: JSONObject) -> Any:
        if method == "tools/list":
            return ok(tools=[])
        return Response(rid, error={"code": -32020, "message": "Header mismatch"})

    async with ClientSession(FakeTransport(handler)) as client:
        with pytest.raises(HeaderMismatch):
            await client.call_tool("t")
