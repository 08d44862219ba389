"""Structured logs (MCPKIT_LOG_FORMAT=json): one JSON object a line on stderr with the trace
and request ids; MCP's own logging (`notifications/message`) still reaches 2025-11-25 peers."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import Any

import orjson
from opentelemetry import trace

from mcpkit.server.settings import Settings
from mcpkit.telemetry.context import RequestScope, current_request
from mcpkit.telemetry.logs import JsonFormatter
from support import ROOT, meta, scaled
from telemetry_support import SPEC_TRACEPARENT, Recorded

SERVER = ROOT / "tests/servers/logging_server.py"


def test_a_record_as_json_with_trace_and_request_ids() -> None:
    recorded = Recorded()
    tracer = recorded.tracer_provider.get_tracer("test")
    record = logging.LogRecord("shop", logging.ERROR, __file__, 1, "lost %s", ("x",), None)
    record.order = "ORD-7"  # what extra= adds
    request = type("R", (), {"id": 7, "method": "tools/call"})()
    token = current_request.set(RequestScope(request))
    try:
        with tracer.start_as_current_span("work") as span:
            try:
                raise ValueError("boom")
            except ValueError:
                record.exc_info = sys.exc_info()
            line = JsonFormatter().format(record)
    finally:
        current_request.reset(token)
    out = orjson.loads(line)
    assert out["message"] == "lost x" and out["level"] == "error" and out["logger"] == "shop"
    assert out["time"].endswith("Z")
    assert out["trace_id"] == f"{span.get_span_context().trace_id:032x}"
    assert out["span_id"] == f"{span.get_span_context().span_id:016x}"
    assert out["request_id"] == 7 and out["mcp.method.name"] == "tools/call"
    assert out["order"] == "ORD-7" and "ValueError: boom" in out["exception"]
    assert "trace_id" not in orjson.loads(JsonFormatter().format(record))  # outside a span
    assert trace.get_current_span().get_span_context().is_valid is False
    recorded.close()


def test_the_json_format_is_a_checked_setting() -> None:
    assert Settings.from_env({"MCPKIT_LOG_FORMAT": "JSON"}).log_format == "json"
    try:
        Settings.from_env({"MCPKIT_LOG_FORMAT": "yaml"})
    except ValueError as exc:
        assert "MCPKIT_LOG_FORMAT='yaml' is not valid: expected one of text, json" in str(exc)
    else:
        raise AssertionError("accepted yaml")


async def exchange(proc: Any, message: dict[str, Any]) -> list[dict[str, Any]]:
    """Send one request; every line up to its response."""
    proc.stdin.write(orjson.dumps(message) + b"\n")
    await proc.stdin.drain()
    lines = []
    while True:
        line = orjson.loads(await asyncio.wait_for(proc.stdout.readline(), scaled(20)))
        lines.append(line)
        if line.get("id") == message["id"]:
            return lines


async def test_a_stdio_server_logs_json_lines_and_still_sends_mcp_log_messages() -> None:
    env = {
        **os.environ,
        "MCPKIT_LOG_FORMAT": "json",
        "MCPKIT_TELEMETRY": "1",
        "OTEL_TRACES_EXPORTER": "none",
        "OTEL_METRICS_EXPORTER": "none",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SERVER),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        # The modern wire: the log line carries the caller's trace and the request id.
        params = {"name": "place", "arguments": {"order": "ORD-1"}}
        modern = {**params, "_meta": meta(traceparent=SPEC_TRACEPARENT)}
        lines = await exchange(
            proc, {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": modern}
        )
        assert lines[-1]["result"]["content"][0]["text"] == "placed ORD-1"
        assert not [m for m in lines if m.get("method") == "notifications/message"]  # not asked
        # A 2025-11-25 session that asks for log messages gets them (deprecated, still served).
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        }
        await exchange(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        level = {"level": "info"}
        await exchange(
            proc, {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": level}
        )
        params["arguments"] = {"order": "ORD-2"}
        lines = await exchange(
            proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}
        )
        (note,) = [m for m in lines if m.get("method") == "notifications/message"]
        assert note["params"]["level"] == "info" and note["params"]["data"] == "placing ORD-2"
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        stderr = await asyncio.wait_for(proc.stderr.read(), scaled(20))  # type: ignore[union-attr]
        await proc.wait()
    records = [orjson.loads(line) for line in stderr.splitlines() if line.strip()]
    placed = [r for r in records if r.get("logger") == "shop.orders"]
    assert [r["message"] for r in placed] == ["placing ORD-1", "placing ORD-2"]
    first, second = placed
    assert first["trace_id"] == SPEC_TRACEPARENT.split("-")[1]
    assert first["request_id"] == 5 and first["mcp.method.name"] == "tools/call"
    assert first["order"] == "ORD-1" and first["level"] == "warning"
    assert second["request_id"] == 3 and "trace_id" in second
