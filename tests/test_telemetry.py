"""Telemetry in process: trace context in `_meta` (BASE-53), server spans in both eras, error
attributes, client injection and baggage, MRTR rounds, and what happens when it is off."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import pytest
from opentelemetry import baggage
from opentelemetry import context as otel_context
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.trace import SpanKind

from host_support import RecordingUI
from legacy_support import session
from mcpkit import Context, Server, ToolError
from mcpkit.client import Client
from mcpkit.host import ConsentPolicy
from mcpkit.host.config import parse_config
from mcpkit.host.hooks import meta_key_problem
from mcpkit.host.link import ServerLink
from mcpkit.protocol.tracecontext import (
    trace_meta_problem,
    valid_baggage,
    valid_traceparent,
    valid_tracestate,
)
from mcpkit.telemetry import Telemetry, TelemetryError, resolve
from support import AsgiClient, headers_for, rpc, scaled
from telemetry_support import SPEC_PARENT_ID, SPEC_TRACE_ID, SPEC_TRACEPARENT, Recorded

SEEN: dict[str, Any] = {}


@pytest.fixture
def recorded() -> Any:
    r = Recorded()
    yield r
    r.close()


def shop(telemetry: Any) -> Server:
    server = Server("shop", telemetry=telemetry)

    @server.tool()
    async def echo(text: str) -> str:
        """Echo the text back."""
        SEEN["baggage"] = dict(baggage.get_all())
        return text

    @server.tool()
    async def broken() -> str:
        """Always fails."""
        raise ToolError("out of stock")

    @server.tool()
    async def confirm(ctx: Context) -> str:
        """Asks the user first."""
        answer = await ctx.elicit("Sure?", {"type": "object", "properties": {}})
        return answer.action

    return server


def call(name: str, arguments: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    return rpc("tools/call", {"name": name, "arguments": arguments or {}}, **meta)


# -- the spec's example, and what is not W3C (BASE-53) ---------------------------------------
async def test_the_specs_example_traceparent_is_the_server_spans_parent(recorded: Any) -> None:
    app = AsgiClient(shop(recorded.telemetry).http_app())
    reply = await app.post(call("echo", {"text": "hi"}, traceparent=SPEC_TRACEPARENT))
    assert reply.status == 200 and reply.result["content"][0]["text"] == "hi"
    span = recorded.span("tools/call echo")
    assert span.kind.name == "SERVER"
    assert span.context.trace_id == SPEC_TRACE_ID
    assert span.parent is not None and span.parent.span_id == SPEC_PARENT_ID
    assert span.parent.is_remote and span.parent.trace_flags.sampled
    assert span.attributes["mcp.method.name"] == "tools/call"
    assert span.attributes["gen_ai.tool.name"] == "echo"
    assert span.attributes["gen_ai.operation.name"] == "execute_tool"
    assert span.attributes["jsonrpc.request.id"] == "1"
    assert span.attributes["mcp.protocol.version"] == "2026-07-28"
    assert span.attributes["network.transport"] == "tcp"


async def test_tracestate_and_baggage_come_with_the_parent(recorded: Any) -> None:
    app = AsgiClient(shop(recorded.telemetry).http_app())
    reply = await app.post(
        call(
            "echo",
            {"text": "hi"},
            traceparent=SPEC_TRACEPARENT,
            tracestate="rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
            baggage="userId=alice,serverNode=DF%2028,isProduction=false",
        )
    )
    assert reply.status == 200
    span = recorded.span("tools/call echo")
    assert span.parent is not None
    assert span.parent.trace_state.get("congo") == "t61rcWkgMzE"
    assert SEEN["baggage"] == {"userId": "alice", "serverNode": "DF 28", "isProduction": "false"}


@pytest.mark.parametrize(
    "bad",
    [
        "ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",  # version ff
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  # zero trace id
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",  # zero parent id
        "00-0AF7651916CD43DD8448EB211C80319C-00F067AA0BA902B7-01",  # upper case
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7",  # no flags
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-extra",  # v00 with more
        "garbage",
        "",
        42,
        {"traceparent": SPEC_TRACEPARENT},
        None,
    ],
)
async def test_malformed_trace_context_is_ignored_and_the_request_succeeds(
    recorded: Any, bad: Any
) -> None:
    app = AsgiClient(shop(recorded.telemetry).http_app())
    reply = await app.post(
        call("echo", {"text": "hi"}, traceparent=bad, tracestate="a=b", baggage=[1, 2])
    )
    assert reply.status == 200 and reply.result["content"][0]["text"] == "hi"
    span = recorded.span("tools/call echo")
    assert span.parent is None and span.context.trace_id != SPEC_TRACE_ID
    assert SEEN["baggage"] == {}


def test_w3c_checks() -> None:
    assert valid_traceparent(SPEC_TRACEPARENT)
    assert valid_traceparent("01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-later")
    assert not valid_traceparent("0af7651916cd43dd8448eb211c80319c")
    assert valid_tracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
    assert valid_tracestate("tenant@vendor=x, ,other=y")
    assert not valid_tracestate("Upper=1")
    assert not valid_tracestate("a=1,a=2")  # a key at most once
    assert not valid_tracestate(",".join(f"k{i}=v" for i in range(33)))
    assert valid_baggage("userId=alice,serverNode=DF%2028;p=1,isProduction=false")
    assert not valid_baggage("user id=alice")
    assert not valid_baggage("k=a,b")
    assert trace_meta_problem({"traceparent": SPEC_TRACEPARENT, "x": 1}) is None
    assert "BASE-53" in str(trace_meta_problem({"traceparent": "nope"}))
    assert "needs a traceparent" in str(trace_meta_problem({"tracestate": "a=b"}))


# -- server spans: outcomes, both eras ---------------------------------------------------------
async def test_errors_carry_the_json_rpc_code_and_tool_errors_say_so(recorded: Any) -> None:
    app = AsgiClient(shop(recorded.telemetry).http_app())
    assert (await app.post(call("nope"))).code == -32602
    failed = recorded.span("tools/call nope")
    assert failed.attributes["error.type"] == "-32602"
    assert failed.attributes["rpc.response.status_code"] == "-32602"
    assert failed.status.status_code.name == "ERROR"
    assert failed.status.description == "Unknown tool: nope"
    assert (await app.post(call("broken"))).result["isError"] is True
    tool_error = recorded.span("tools/call broken")
    assert tool_error.attributes["error.type"] == "tool_error"
    assert "rpc.response.status_code" not in tool_error.attributes
    duration = {
        (p["gen_ai.tool.name"], p.get("error.type"))
        for p in recorded.metrics()["mcp.server.operation.duration"]
    }
    assert duration == {("nope", "-32602"), ("broken", "tool_error")}


async def test_a_cancelled_request_fails_both_spans_as_cancelled(recorded: Any) -> None:
    server = Server("slow", telemetry=recorded.telemetry)
    started, server_span_ended = asyncio.Event(), asyncio.Event()

    class ServerSpanEnded(SpanProcessor):
        def on_end(self, span: ReadableSpan) -> None:
            if span.kind is SpanKind.SERVER:
                server_span_ended.set()

    recorded.tracer_provider.add_span_processor(ServerSpanEnded())

    @server.tool()
    async def wait() -> str:
        """Waits until cancelled."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    async with Client(server, telemetry=recorded.telemetry) as client:
        call = asyncio.create_task(client.call_tool("wait"))
        await asyncio.wait_for(started.wait(), scaled(10))
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
    await asyncio.wait_for(server_span_ended.wait(), scaled(10))
    spans = recorded.spans("tools/call wait")
    assert sorted(span.kind.name for span in spans) == ["CLIENT", "SERVER"]
    for span in spans:
        assert span.attributes["error.type"] == "cancelled", span.kind
        assert span.status.description == "the request was cancelled"


async def test_an_mrtr_round_is_marked_and_counted(recorded: Any) -> None:
    app = AsgiClient(shop(recorded.telemetry).http_app())
    reply = await app.post(call("confirm", caps={"elicitation": {"form": {}}}))
    assert reply.result["resultType"] == "input_required"
    span = recorded.span("tools/call confirm")
    assert span.attributes["mcpkit.result_type"] == "input_required"
    assert "error.type" not in span.attributes
    (rounds,) = recorded.metrics()["mcpkit.server.mrtr.rounds"]
    assert rounds["gen_ai.tool.name"] == "confirm" and rounds["value"] == 1


async def test_a_legacy_session_has_one_span_per_request_with_its_session_id(
    recorded: Any,
) -> None:
    app = shop(recorded.telemetry).http_app()
    async with session(app) as client:
        await client.request("tools/list", id=2)
        await client.request("ping", id=3)
        result = await client.request(
            "tools/call",
            {
                "name": "echo",
                "arguments": {"text": "x"},
                "_meta": {"traceparent": SPEC_TRACEPARENT},
            },
            id=4,
        )
        assert result["result"]["content"][0]["text"] == "x"
        sid = client.session_id
    assert [s.name for s in recorded.spans()] == [
        "initialize",
        "tools/list",
        "ping",
        "tools/call echo",
    ]
    for span in recorded.spans():
        assert span.kind.name == "SERVER"
        assert span.attributes["mcp.session.id"] == sid
        assert span.attributes["network.transport"] == "tcp"
        assert span.attributes["mcp.protocol.version"] == "2025-11-25"
    served = recorded.span("tools/call echo")
    assert served.context.trace_id == SPEC_TRACE_ID
    assert served.attributes["jsonrpc.request.id"] == "4"
    app.legacy.close()  # type: ignore[union-attr]
    (ended,) = recorded.metrics()["mcp.server.session.duration"]
    assert ended["count"] == 1


# -- the client ---------------------------------------------------------------------------------
async def test_the_client_forwards_baggage_only_when_allowed(recorded: Any) -> None:
    for allowed, expected in [(True, {"tenant": "north"}), (False, {})]:
        # The server's telemetry is off: what arrives in _meta is all it sees.
        server = shop(False)
        seen: list[dict[str, Any]] = []

        async def mw(call: Any, call_next: Any, seen: list[dict[str, Any]] = seen) -> Any:
            seen.append(dict(call.params.get("_meta") or {}))
            return await call_next(call)

        server.add_middleware(mw)
        telemetry = Telemetry(recorded.tracer_provider, recorded.meter_provider, baggage=allowed)
        token = otel_context.attach(baggage.set_baggage("tenant", "north"))
        try:
            async with Client(server, telemetry=telemetry) as client:
                await client.call_tool("echo", {"text": "x"})
        finally:
            otel_context.detach(token)
        meta = seen[-1]
        assert valid_traceparent(meta["traceparent"])
        sent = {
            k: v
            for k, v in (item.split("=") for item in meta.get("baggage", "").split(",") if item)
        }
        assert sent == expected


async def test_the_client_refuses_to_send_malformed_trace_context() -> None:
    async with Client(shop(False), telemetry=False) as client:
        with pytest.raises(ValueError, match="BASE-53"):
            await client.call_tool("echo", {"text": "x"}, meta={"traceparent": "nope"})
        ok = await client.call_tool("echo", {"text": "x"}, meta={"traceparent": SPEC_TRACEPARENT})
        assert ok.text == "x"


def test_the_host_forwards_baggage_to_trusted_servers_or_those_configured() -> None:
    cfg = parse_config(
        {
            "mcpServers": {
                "mine": {"command": "x", "trusted": True},
                "theirs": {"url": "http://127.0.0.1:1/mcp"},
                "told": {"url": "http://127.0.0.1:2/mcp", "baggage": True},
                "not-mine": {"command": "x", "trusted": True, "baggage": False},
            }
        }
    )
    got = {name: s.forwards_baggage for name, s in cfg.servers.items()}
    assert got == {"mine": True, "theirs": False, "told": True, "not-mine": False}
    # What each server's client is given; the host's own switch wins over all.
    for host_baggage in (True, False):
        telemetry = Telemetry(baggage=host_baggage)
        links = {
            name: ServerLink(entry, RecordingUI(), ConsentPolicy(), None, None, telemetry=telemetry)
            for name, entry in cfg.servers.items()
        }
        given = {name: link.telemetry.baggage for name, link in links.items()}  # type: ignore[union-attr]
        assert given == {name: host_baggage and ok for name, ok in got.items()}
    assert "BASE-53" in str(meta_key_problem("baggage"))  # not through the on_call hook


# -- on and off ---------------------------------------------------------------------------------
def test_off_by_default_and_free_when_off() -> None:
    script = """
import asyncio, sys
from mcpkit import Server
from mcpkit.client import Client
server = Server("s")
@server.tool()
async def echo(text: str) -> str:
    "Echo."
    return text
async def main():
    async with Client(server) as c:
        assert (await c.call_tool("echo", {"text": "hi"})).text == "hi"
asyncio.run(main())
assert server.telemetry is None and "opentelemetry" not in sys.modules, sorted(sys.modules)
print("ok")
"""
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=scaled(60)
    )
    assert done.stdout.strip() == "ok", done.stderr


def test_settings_are_checked_with_one_line_errors(monkeypatch: Any) -> None:
    monkeypatch.setenv("MCPKIT_TELEMETRY", "maybe")
    with pytest.raises(TelemetryError, match="MCPKIT_TELEMETRY='maybe' is not valid"):
        resolve(None)
    monkeypatch.setenv("MCPKIT_TELEMETRY", "on")
    assert resolve(None) == Telemetry()
    assert resolve(False) is None
    from mcpkit.telemetry.setup import configure

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    with pytest.raises(TelemetryError, match="exports OTLP over HTTP"):
        configure("x")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_PROTOCOL")
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "zipkin")
    with pytest.raises(TelemetryError, match="OTEL_TRACES_EXPORTER='zipkin'"):
        configure("x", metrics=False)


async def test_a_request_refused_at_the_door_has_its_span(recorded: Any) -> None:
    app = AsgiClient(shop(recorded.telemetry).http_app())
    message = rpc(
        "tools/call", {"name": "echo", "arguments": {"text": "hi"}}, traceparent=SPEC_TRACEPARENT
    )
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "1999-01-01"
    headers = {**headers_for(message), "mcp-protocol-version": "1999-01-01"}
    reply = await app.post(message, headers)
    assert reply.code == -32022
    span = recorded.span("tools/call echo")
    assert span.attributes["error.type"] == "-32022"
    assert span.attributes["rpc.response.status_code"] == "-32022"
    assert span.context.trace_id == SPEC_TRACE_ID
