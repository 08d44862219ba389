"""Streamable HTTP request headers, including x-mcp-header mirroring."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcpkit.client.http import HttpTransport
from mcpkit.client.http_headers import ToolHeaderIndex, build_request_headers
from mcpkit.protocol.headers import HeaderParam
from mcpkit.protocol.versions import LATEST, META_PROTOCOL_VERSION

META = {"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}

SQL_TOOL: dict[str, Any] = {
    "name": "execute_sql",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "query": {"type": "string"},
            "opts": {
                "type": "object",
                "properties": {
                    "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
                    "limit": {"type": "integer", "x-mcp-header": "Limit"},
                },
            },
        },
    },
}


def test_standard_headers_for_any_request() -> None:
    headers = build_request_headers("tools/list", META)
    assert headers == {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/list",
    }


def test_protocol_version_header_follows_meta() -> None:
    headers = build_request_headers("server/discover", {"_meta": {META_PROTOCOL_VERSION: "x"}})
    assert headers["MCP-Protocol-Version"] == "x"
    assert build_request_headers("server/discover", None)["MCP-Protocol-Version"] == LATEST


@pytest.mark.parametrize(
    ("method", "params", "name"),
    [
        ("tools/call", {"name": "get_weather"}, "get_weather"),
        ("prompts/get", {"name": "greet"}, "greet"),
        ("resources/read", {"uri": "file:///a/b.json"}, "file:///a/b.json"),
        ("tools/call", {"name": "Hello, 世界"}, "=?base64?SGVsbG8sIOS4lueVjA==?="),
        ("resources/read", {"uri": " padded "}, "=?base64?IHBhZGRlZCA=?="),
        ("tasks/get", {"taskId": "t-1"}, "t-1"),  # TASK-16
        ("tasks/update", {"taskId": "t-1", "inputResponses": {}}, "t-1"),
        ("tasks/cancel", {"taskId": "t-1"}, "t-1"),
    ],
)
def test_mcp_name(method: str, params: dict[str, Any], name: str) -> None:
    assert build_request_headers(method, {**params, **META})["Mcp-Name"] == name


def test_no_mcp_name_for_other_methods() -> None:
    assert "Mcp-Name" not in build_request_headers("tools/list", {"name": "x", **META})


def test_param_headers_from_arguments() -> None:
    params = [
        HeaderParam("Region", ("region",), "string"),
        HeaderParam("Dry-Run", ("opts", "dry"), "boolean"),
        HeaderParam("Limit", ("opts", "limit"), "integer"),
    ]
    body = {
        "name": "execute_sql",
        "arguments": {
            "region": "us-west1",
            "query": "SELECT 1",
            "opts": {"dry": False, "limit": 5.0},
        },
        **META,
    }
    headers = build_request_headers("tools/call", body, params)
    assert headers["Mcp-Param-Region"] == "us-west1"
    assert headers["Mcp-Param-Dry-Run"] == "false"
    assert headers["Mcp-Param-Limit"] == "5"


def test_absent_null_and_non_scalar_values_are_omitted() -> None:
    params = [HeaderParam("A", ("a",), "string"), HeaderParam("B", ("b", "c"), "string")]
    for arguments in ({}, {"a": None, "b": None}, {"a": ["x"], "b": {"c": None}}, {"b": "str"}):
        headers = build_request_headers("tools/call", {"name": "t", "arguments": arguments}, params)
        assert not [h for h in headers if h.startswith("Mcp-Param-")]


def test_param_value_encoding() -> None:
    params = [HeaderParam("Text", ("t",), "string")]
    body = {"name": "t", "arguments": {"t": "line1\nline2"}}
    headers = build_request_headers("tools/call", body, params)
    assert headers["Mcp-Param-Text"] == "=?base64?bGluZTEKbGluZTI=?="


def test_index_learns_and_rejects_tools(caplog: pytest.LogCaptureFixture) -> None:
    bad_type = {
        "name": "bad",
        "inputSchema": {"properties": {"n": {"type": "number", "x-mcp-header": "N"}}},
    }
    in_items = {
        "name": "bad2",
        "inputSchema": {
            "properties": {
                "xs": {"type": "array", "items": {"type": "string", "x-mcp-header": "X"}}
            }
        },
    }
    plain = {"name": "plain", "inputSchema": {"type": "object"}}
    index = ToolHeaderIndex()
    with caplog.at_level(logging.WARNING, logger="mcpkit.client"):
        kept = index.accept([SQL_TOOL, bad_type, in_items, plain, {"name": "no-schema"}])
    assert [t["name"] for t in kept] == ["execute_sql", "plain", "no-schema"]
    assert "'bad'" in caplog.text and "'bad2'" in caplog.text
    assert [p.header for p in index.params_for("execute_sql")] == ["Region", "Dry-Run", "Limit"]
    assert index.params_for("plain") == ()
    assert index.params_for("bad") == ()
    assert index.params_for("unknown") == ()
    assert index.params_for(None) == ()


def test_index_forgets_a_tool_that_became_invalid() -> None:
    index = ToolHeaderIndex()
    index.accept([SQL_TOOL])
    broken = {**SQL_TOOL, "inputSchema": {"properties": {"r": {"x-mcp-header": "bad name"}}}}
    assert index.accept([broken]) == []
    assert index.params_for("execute_sql") == ()


def test_http_transport_headers_for_tools_call() -> None:
    transport = HttpTransport("http://localhost/mcp", headers={"Authorization": "Bearer x"})
    assert transport.accept_tools([SQL_TOOL]) == [SQL_TOOL]
    body = {"name": "execute_sql", "arguments": {"region": "eu", "query": "q"}, **META}
    headers = transport.headers_for("tools/call", body)
    assert headers["Mcp-Name"] == "execute_sql"
    assert headers["Mcp-Param-Region"] == "eu"
    assert headers["Authorization"] == "Bearer x"
    # the same argument name on another method is not mirrored
    assert "Mcp-Param-Region" not in transport.headers_for("prompts/get", body)
