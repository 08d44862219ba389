"""One Northwind conversation, one trace: the host's turn, round and tool call (this process,
in-memory exporter), the client's requests, and the servers' spans (a stdio and an HTTP
process, exported over OTLP/HTTP to a receiver here: the real wire path), down to the spans
the handlers make themselves. Attributes are asserted by their semantic-convention names."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from host_support import (
    NORTHWIND,
    FakeAPI,
    RecordingUI,
    api_path,
    example_config,
    host_for,
    script,
    stop,
)
from mcpkit.client import Client
from support import free_port, wait_port
from telemetry_support import OtlpReceiver, Recorded

SERVER, CLIENT, INTERNAL = 2, 3, 1  # OTLP span kinds


@pytest.fixture
async def receiver() -> AsyncIterator[OtlpReceiver]:
    async with OtlpReceiver() as r:
        yield r


async def start_warehouse(receiver: OtlpReceiver) -> tuple[asyncio.subprocess.Process, int]:
    port = free_port()
    env = {**os.environ, **receiver.env("northwind-warehouse")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(NORTHWIND / "warehouse_server.py"), str(port), env=env
    )
    await wait_port(port, proc)
    return proc, port


async def test_one_conversation_is_one_trace_from_the_model_to_the_handlers(
    receiver: OtlpReceiver, tmp_path: Path
) -> None:
    recorded = Recorded()
    replies = script(
        "anthropic",
        [
            ("shipping__track_parcel", {"parcel_id": "NW-1042"}),
            ("warehouse__get_stock", {"sku": "KET-BLUE"}),
            ("warehouse__cancel_reservation", {"reservation_id": "r-1"}),  # denied by config
        ],
        "NW-1042 is in transit; 14 blue kettles are in stock.",
    )
    warehouse, port = await start_warehouse(receiver)
    try:
        env = {"PYTHON": sys.executable, "WAREHOUSE_PORT": str(port), "RETURNS_PORT": "1"}
        cfg = example_config(env, shipping={"env": receiver.env("northwind-shipping")})
        async with FakeAPI(api_path("anthropic"), replies) as api:
            host = host_for(
                cfg,
                api,
                RecordingUI(),
                tmp_path,
                servers=["shipping", "warehouse"],
                telemetry=recorded.telemetry,
            )
            async with host:
                answer = await host.agent(name="support").ask("Where is NW-1042? Kettles?")
            await receiver.wait_for(
                "tools/call track_parcel", "parcels.lookup", "tools/call get_stock", "stock.lookup"
            )
    finally:
        await stop(warehouse)
    assert answer.startswith("NW-1042 is in transit")

    # -- the host's side (this process) -------------------------------------------------------
    turn = recorded.span("invoke_agent support")
    trace_id = turn.context.trace_id
    mine = [s for s in recorded.spans() if s.context.trace_id == trace_id]
    rounds = [s for s in mine if s.name == "agent round"]
    assert [r.attributes["mcpkit.round"] for r in rounds] == [1, 2]
    assert all(r.parent is not None and r.parent.span_id == turn.context.span_id for r in rounds)
    assert turn.parent is None  # the root of the conversation's trace
    chats = [s for s in mine if s.name == "chat fake"]
    assert len(chats) == 2
    assert {c.parent.span_id for c in chats if c.parent} == {r.context.span_id for r in rounds}
    chat = chats[0]
    assert chat.kind.name == "CLIENT"
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.provider.name"] == "anthropic"
    assert chat.attributes["gen_ai.request.model"] == "fake"
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert chat.attributes["gen_ai.usage.input_tokens"] == 1  # what the API reported
    assert chat.attributes["gen_ai.usage.output_tokens"] == 1

    wire = {s.span_id: s for s in receiver.spans if s.trace_id == trace_id}
    for alias, tool, transport, service, inner in [
        ("shipping__track_parcel", "track_parcel", "pipe", "northwind-shipping", "parcels.lookup"),
        ("warehouse__get_stock", "get_stock", "tcp", "northwind-warehouse", "stock.lookup"),
    ]:
        call = recorded.span(f"execute_tool {alias}")
        assert call.context.trace_id == trace_id
        assert call.parent is not None and call.parent.span_id == rounds[0].context.span_id
        assert call.attributes["gen_ai.operation.name"] == "execute_tool"
        assert call.attributes["gen_ai.tool.name"] == alias
        assert call.attributes["gen_ai.tool.call.id"].startswith("toolu_")
        assert call.attributes["mcpkit.server"] == alias.split("__")[0]
        assert call.attributes["mcpkit.outcome"] == "ok"
        assert call.attributes["mcpkit.consent.decision"] == "allow"

        (client,) = [
            s
            for s in mine
            if s.name == f"tools/call {tool}"
            and s.parent
            and s.parent.span_id == call.context.span_id
        ]
        assert client.kind.name == "CLIENT"
        assert client.attributes["mcp.method.name"] == "tools/call"
        assert client.attributes["gen_ai.tool.name"] == tool
        assert client.attributes["gen_ai.operation.name"] == "execute_tool"
        assert client.attributes["jsonrpc.request.id"].isdigit()
        assert client.attributes["mcp.protocol.version"] == "2026-07-28"
        assert client.attributes["network.transport"] == transport
        if transport == "tcp":
            assert client.attributes["server.address"] == "127.0.0.1"
            assert client.attributes["server.port"] == port

        # -- the server's side (its own process, over OTLP/HTTP) ------------------------------
        served = receiver.named(f"tools/call {tool}")
        assert served.service == service and served.kind == SERVER
        assert served.trace_id == trace_id
        assert served.parent_id == client.context.span_id  # through _meta.traceparent
        assert served.attributes["mcp.method.name"] == "tools/call"
        assert served.attributes["gen_ai.tool.name"] == tool
        assert served.attributes["gen_ai.operation.name"] == "execute_tool"
        assert served.attributes["jsonrpc.request.id"] == client.attributes["jsonrpc.request.id"]
        assert served.attributes["mcp.protocol.version"] == "2026-07-28"
        assert served.attributes["network.transport"] == transport
        assert "error.type" not in served.attributes

        handler = receiver.named(inner)
        assert handler.kind == INTERNAL and handler.trace_id == trace_id
        assert handler.parent_id == served.span_id and handler.span_id in wire

    # One trace: every span of the turn, on either side, hangs from the turn's root.
    parents = {s.context.span_id: s.parent.span_id if s.parent else None for s in mine}
    parents.update({s.span_id: s.parent_id for s in wire.values()})
    for span_id in parents:
        hops = 0
        while parents.get(span_id) is not None:
            span_id, hops = parents[span_id], hops + 1
            assert span_id in parents and hops < 10
        assert span_id == turn.context.span_id

    # -- the host's metrics ---------------------------------------------------------------------
    metrics = recorded.metrics()
    (model_calls,) = metrics["gen_ai.client.operation.duration"]
    assert model_calls["gen_ai.operation.name"] == "chat" and model_calls["count"] == 2
    tokens = {p["gen_ai.token.type"]: p["count"] for p in metrics["gen_ai.client.token.usage"]}
    assert tokens == {"input": 2, "output": 2}
    tool_calls = {p["gen_ai.tool.name"]: p for p in metrics["mcpkit.host.tool_call.duration"]}
    assert tool_calls["warehouse__get_stock"]["mcpkit.outcome"] == "ok"
    decisions = metrics["mcpkit.host.consent.decisions"]
    assert {(d["mcpkit.tool"], d["mcpkit.consent.decision"]) for d in decisions} == {
        ("track_parcel", "allow"),
        ("get_stock", "allow"),
        ("cancel_reservation", "deny"),
    }
    assert tool_calls["warehouse__cancel_reservation"]["mcpkit.outcome"] == "denied"
    denied = recorded.span("execute_tool warehouse__cancel_reservation")
    assert denied.attributes["error.type"] == "denied"
    assert denied.attributes["mcpkit.consent.decision"] == "deny"
    assert denied.status.status_code.name == "ERROR"
    assert not [s for s in mine if s.parent and s.parent.span_id == denied.context.span_id]
    client_calls = metrics["mcp.client.operation.duration"]
    assert {p["mcp.method.name"] for p in client_calls} >= {"tools/call", "tools/list"}
    recorded.close()


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_legacy_session_is_traced_on_both_sides(
    receiver: OtlpReceiver, transport: str
) -> None:
    """The 2025-11-25 era: the client's spans (its session's channel) are the parents of the
    server's, `initialize` included, over stdio and over HTTP."""
    recorded = Recorded()
    proc = None
    if transport == "http":
        proc, port = await start_warehouse(receiver)
        target: Any = f"http://127.0.0.1:{port}/mcp"
        tool, args, service = "get_stock", {"sku": "MUG-SET"}, "northwind-warehouse"
    else:
        target = {
            "command": sys.executable,
            "args": [str(NORTHWIND / "shipping_server.py")],
            "env": receiver.env("northwind-shipping"),
        }
        tool, args, service = "track_parcel", {"parcel_id": "NW-1043"}, "northwind-shipping"
    try:
        async with Client(target, era="legacy", telemetry=recorded.telemetry) as client:
            assert client.era == "legacy"
            assert not (await client.call_tool(tool, args)).is_error
        await receiver.wait_for("initialize", f"tools/call {tool}")
    finally:
        if proc is not None:
            await stop(proc)
    for name in ("initialize", f"tools/call {tool}"):
        mine = recorded.span(name)
        served = receiver.named(name)
        assert mine.kind.name == "CLIENT" and served.kind == SERVER
        assert served.service == service
        assert served.trace_id == mine.context.trace_id
        assert served.parent_id == mine.context.span_id
        assert served.attributes["mcp.protocol.version"] == "2025-11-25"
        assert served.attributes["network.transport"] == ("tcp" if transport == "http" else "pipe")
        assert served.attributes["mcp.session.id"]
    assert recorded.span(f"tools/call {tool}").attributes["mcp.protocol.version"] == "2025-11-25"
    recorded.close()


async def test_prometheus_scrapes_the_server_metrics(receiver: OtlpReceiver) -> None:
    """OTEL_METRICS_EXPORTER=prometheus: request counts and durations at /metrics."""
    import aiohttp

    metrics_port, port = free_port(), free_port()
    env = {
        **os.environ,
        **receiver.env("northwind-warehouse"),
        "OTEL_METRICS_EXPORTER": "prometheus",
        "OTEL_EXPORTER_PROMETHEUS_HOST": "127.0.0.1",
        "OTEL_EXPORTER_PROMETHEUS_PORT": str(metrics_port),
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(NORTHWIND / "warehouse_server.py"), str(port), env=env
    )
    try:
        await wait_port(port, proc)
        async with Client(f"http://127.0.0.1:{port}/mcp", telemetry=False) as client:
            await client.call_tool("get_stock", {"sku": "KET-BLUE"})
            await client.call_tool("get_stock", {"sku": "NOPE"})
        await wait_port(metrics_port, proc)
        url = f"http://127.0.0.1:{metrics_port}/metrics"
        async with aiohttp.ClientSession() as http, http.get(url) as resp:
            assert resp.status == 200
            text = await resp.text()
    finally:
        await stop(proc)
    counts = [
        line
        for line in text.splitlines()
        if line.startswith("mcp_server_operation_duration_seconds_count{")
        and 'gen_ai_tool_name="get_stock"' in line
    ]
    assert len(counts) == 2, text
    assert any('error_type="tool_error"' in line and line.endswith(" 1.0") for line in counts)
    assert "mcpkit_server_active_requests" in text and "mcpkit_server_sessions" in text
