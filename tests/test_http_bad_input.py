"""Bad input on Streamable HTTP: each case gets the spec's status and JSON-RPC code.

Order of checks: FIXTURE §2.2 / CHECKLIST TR-HDR-19. Never a 500, a hang or a crash.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from mcpkit import Server
from mcpkit.protocol.versions import LEGACY_VERSIONS
from support import AsgiClient, headers_for, meta, rpc

ADVERTISED = ["2026-07-28", *LEGACY_VERSIONS]


def h(message: dict[str, Any], **changes: str | None) -> dict[str, str]:
    headers = headers_for(message)
    for key, value in changes.items():
        name = key.replace("_", "-")
        if value is None:
            headers.pop(name, None)
        else:
            headers[name] = value
    return headers


LIST = rpc("tools/list")
CALL = rpc("tools/call", {"name": "test_simple_text"})


async def test_malformed_json(client: AsgiClient) -> None:
    r = await client.post(None, h(LIST), raw=b'{"jsonrpc": "2.0", "id": 1, "method": ')
    assert (r.status, r.code) == (400, -32700)  # BASE-16
    assert "id" not in r.json  # BASE-11: the id could not be read


async def test_json_array_body(client: AsgiClient) -> None:
    r = await client.post(None, h(LIST), raw=orjson.dumps([LIST]))
    assert (r.status, r.code) == (400, -32600)  # TR-HTTP-09: no batches


async def test_wrong_jsonrpc_version(client: AsgiClient) -> None:
    r = await client.post({**LIST, "jsonrpc": "1.0"}, h(LIST))
    assert (r.status, r.code) == (400, -32600)
    assert r.json["id"] == 1  # BASE-11: echo the id when it could be read


async def test_null_id(client: AsgiClient) -> None:
    r = await client.post({**LIST, "id": None}, h(LIST))
    assert (r.status, r.code) == (400, -32600)  # BASE-04


async def test_missing_id_on_a_request_method(client: AsgiClient) -> None:
    body = {k: v for k, v in LIST.items() if k != "id"}
    r = await client.post(body, h(LIST))
    assert (r.status, r.code) == (400, -32600)  # TR-HTTP-11: rejected notification


async def test_float_id(client: AsgiClient) -> None:
    r = await client.post({**LIST, "id": 1.5}, h(LIST))
    assert (r.status, r.code) == (400, -32600)  # BASE-03


async def test_params_not_an_object(client: AsgiClient) -> None:
    r = await client.post({**LIST, "params": [1, 2]}, h(LIST))
    assert (r.status, r.code) == (400, -32600)


async def test_wrong_param_types_tool_name(client: AsgiClient) -> None:
    msg = rpc("tools/call", {"name": 5})
    r = await client.post(msg, h(msg, mcp_name="5"))
    assert (r.status, r.code) == (400, -32020)  # Mcp-Name "5" vs body 5: mismatch first
    r = await client.post(msg, h(msg, mcp_name=None))
    assert (r.status, r.code) == (400, -32020)


async def test_wrong_param_types_arguments(client: AsgiClient) -> None:
    msg = rpc("tools/call", {"name": "test_simple_text", "arguments": ["x"]})
    r = await client.post(msg)
    assert (r.status, r.code) == (200, -32602)


async def test_wrong_argument_type_is_a_tool_error(everything: Any) -> None:
    # TOOL-22: bad argument values reach the model as isError results, naming what to change.
    from mcpkit import Server

    server = Server("t")

    @server.tool()
    async def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    msg = rpc("tools/call", {"name": "add", "arguments": {"a": "x", "b": 2}})
    r = await AsgiClient(server.http_app()).post(msg)
    assert r.status == 200
    assert r.result["isError"] is True
    assert "'a'" in r.result["content"][0]["text"]


async def test_bad_cursor(client: AsgiClient) -> None:
    r = await client.post(rpc("tools/list", {"cursor": "not-ours"}))
    assert (r.status, r.code) == (200, -32602)  # PAG-06
    r = await client.post(rpc("tools/list", {"cursor": ["x"]}))
    assert (r.status, r.code) == (200, -32602)


async def test_unknown_method(client: AsgiClient) -> None:
    r = await client.post(rpc("unknown/method"))
    assert (r.status, r.code) == (404, -32601)  # TR-HDR-05


@pytest.mark.parametrize(
    "method", ["initialize", "ping", "logging/setLevel", "resources/subscribe"]
)
async def test_removed_methods(client: AsgiClient, method: str) -> None:
    r = await client.post(rpc(method))
    assert (r.status, r.code) == (404, -32601)


async def test_unknown_tool(client: AsgiClient) -> None:
    r = await client.post(rpc("tools/call", {"name": "nope"}))
    assert (r.status, r.code) == (200, -32602)  # TOOL-21


async def test_missing_meta(client: AsgiClient) -> None:
    msg = rpc("tools/list", with_meta=False)
    r = await client.post(msg)
    assert (r.status, r.code) == (400, -32602)  # BASE-46


async def test_meta_without_capabilities(client: AsgiClient) -> None:
    msg = rpc("tools/list", with_meta=False)
    msg["params"]["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    r = await client.post(msg)
    assert (r.status, r.code) == (400, -32602)


async def test_bad_log_level(client: AsgiClient) -> None:
    r = await client.post(rpc("tools/list", **{"io.modelcontextprotocol/logLevel": "loud"}))
    assert (r.status, r.code) == (400, -32602)


async def test_missing_version_header(client: AsgiClient) -> None:
    r = await client.post(LIST, h(LIST, mcp_protocol_version=None))
    assert (r.status, r.code) == (400, -32020)  # TR-HDR-07


async def test_version_header_differs_from_meta(client: AsgiClient) -> None:
    msg = rpc("tools/list", **{"io.modelcontextprotocol/protocolVersion": "v999"})
    r = await client.post(msg)
    assert (r.status, r.code) == (400, -32020)  # TR-HDR-03


async def test_unsupported_version(client: AsgiClient) -> None:
    msg = rpc("tools/list", **{"io.modelcontextprotocol/protocolVersion": "v999"})
    r = await client.post(msg, h(msg, mcp_protocol_version="v999"))
    assert (r.status, r.code) == (400, -32022)  # VER-02
    assert r.json["error"]["data"] == {"supported": ADVERTISED, "requested": "v999"}
    # A modern request naming a session-era version is still refused on the stateless wire.
    msg = rpc("tools/list", **{"io.modelcontextprotocol/protocolVersion": "2025-11-25"})
    r = await client.post(msg, h(msg, mcp_protocol_version="2025-11-25"))
    assert (r.status, r.code) == (400, -32022)


def modern_only() -> AsgiClient:
    server = Server("modern-only", legacy=False)

    @server.tool()
    async def ping_tool() -> str:
        return "pong"

    return AsgiClient(server.http_app())


async def test_legacy_initialize_names_supported_versions(client: AsgiClient) -> None:
    msg = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "x", "version": "1"},
        },
    }
    r = await modern_only().post(msg, h(msg, mcp_protocol_version=None))
    assert (r.status, r.code) == (400, -32022)  # VER-12: a modern-only server names its versions
    assert r.json["error"]["data"]["supported"] == ["2026-07-28"]


async def test_method_header_mismatch(client: AsgiClient) -> None:
    r = await client.post(LIST, h(LIST, mcp_method="prompts/list"))
    assert (r.status, r.code) == (400, -32020)  # TR-HDR-12
    r = await client.post(LIST, h(LIST, mcp_method=None))
    assert (r.status, r.code) == (400, -32020)  # TR-HDR-13
    r = await client.post(LIST, h(LIST, mcp_method="TOOLS/LIST"))
    assert (r.status, r.code) == (400, -32020)  # TR-HDR-11: values are case-sensitive


async def test_name_header_mismatch(client: AsgiClient) -> None:
    r = await client.post(CALL, h(CALL, mcp_name="other"))
    assert (r.status, r.code) == (400, -32020)
    r = await client.post(CALL, h(CALL, mcp_name=None))
    assert (r.status, r.code) == (400, -32020)


async def test_name_header_sentinel_and_whitespace(client: AsgiClient) -> None:
    r = await client.post(CALL, h(CALL, mcp_name="=?base64?dGVzdF9zaW1wbGVfdGV4dA==?="))
    assert r.status == 200 and "result" in r.json  # TR-HDR-15
    r = await client.post(CALL, h(CALL, mcp_name="  test_simple_text  "))
    assert r.status == 200 and "result" in r.json


async def test_non_ascii_name_without_base64(client: AsgiClient) -> None:
    msg = rpc("resources/read", {"uri": "test://café"})
    scope_headers = h(msg)
    scope_headers["mcp-name"] = "test://café"  # raw UTF-8 bytes on the wire
    r = await client.post(msg, scope_headers)
    assert (r.status, r.code) == (400, -32020)  # TR-HDR-14 / TR-ENC-03


async def test_non_ascii_name_with_base64_passes_headers(client: AsgiClient) -> None:
    msg = rpc("resources/read", {"uri": "test://café"})
    r = await client.post(msg, h(msg, mcp_name="=?base64?dGVzdDovL2NhZsOp?="))
    assert (r.status, r.code) == (200, -32602)  # headers fine; the resource does not exist
    assert r.json["error"]["data"] == {"uri": "test://café"}  # RES-13


async def test_param_header_missing_and_bad_base64(client: AsgiClient) -> None:
    msg = rpc("tools/call", {"name": "test_x_mcp_header", "arguments": {"region": "Hello"}})
    r = await client.post(msg)
    assert (r.status, r.code) == (400, -32020)  # TR-XMH-16
    r = await client.post(msg, h(msg, mcp_param_region="=?base64?SGVsbG8?="))
    assert (r.status, r.code) == (400, -32020)  # bad padding
    r = await client.post(msg, h(msg, mcp_param_region="=?base64?SGVs!!!bG8=?="))
    assert (r.status, r.code) == (400, -32020)
    r = await client.post(msg, h(msg, mcp_param_region="Bye"))
    assert (r.status, r.code) == (400, -32020)  # TR-XMH-15
    r = await client.post(msg, h(msg, mcp_param_region="=?base64?SGVsbG8=?="))
    assert r.status == 200 and r.result["content"][0]["text"] == "region=Hello"


async def test_oversized_body() -> None:
    from mcpkit import Server

    server = Server("t")
    client = AsgiClient(server.http_app(max_body_size=1000))
    big = rpc("tools/list", {"pad": "x" * 2000})
    r = await client.post(big)
    assert r.status == 413
    assert r.code == -32600


async def test_wrong_content_type(client: AsgiClient) -> None:
    r = await client.post(LIST, h(LIST, content_type="text/plain"))
    assert (r.status, r.code) == (415, -32600)
    r = await client.post(LIST, h(LIST, content_type=None))
    assert (r.status, r.code) == (415, -32600)


async def test_hostile_origin(client: AsgiClient) -> None:
    r = await client.post(LIST, h(LIST, origin="http://evil.example.com"))
    assert r.status == 403  # TR-HTTP-03
    assert r.code == -32600


async def test_hostile_host(client: AsgiClient) -> None:
    r = await client.post(LIST, h(LIST, host="evil.example.com"))
    assert r.status == 403  # DNS rebinding (FIXTURE 2.6)


async def test_loopback_origin_allowed(client: AsgiClient) -> None:
    r = await client.post(LIST, h(LIST, origin="http://localhost:3000"))
    assert r.status == 200


async def test_get_and_delete_are_not_allowed(client: AsgiClient) -> None:
    for verb in ("GET", "DELETE"):
        r = await modern_only().post(LIST, h(LIST), http_method=verb)
        assert r.status == 405  # TR-HBC-04
        assert r.headers["allow"] == "POST"
        # Dual-era: GET and DELETE exist only inside a session (B.1.2).
        r = await client.post(LIST, h(LIST), http_method=verb)
        assert r.status == 405 and r.headers["allow"] == "GET, POST, DELETE"


async def test_notification_is_accepted(client: AsgiClient) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    r = await client.post(note, h(LIST, mcp_method="notifications/cancelled"))
    assert r.status == 202 and r.body == b""  # TR-HTTP-10


async def test_response_object_is_rejected(client: AsgiClient) -> None:
    r = await client.post({"jsonrpc": "2.0", "id": 1, "result": {}}, h(LIST))
    assert (r.status, r.code) == (400, -32600)


async def test_other_path(client: AsgiClient) -> None:
    r = await client.post(LIST, h(LIST), path="/other")
    assert r.status == 404 and r.body == b"Not Found"


async def test_capability_not_declared(client: AsgiClient) -> None:
    msg = rpc("tools/call", {"name": "test_missing_capability"})
    r = await client.post(msg)
    assert (r.status, r.code) == (400, -32021)  # BASE-49
    assert r.json["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
    msg["params"]["_meta"] = meta({"sampling": {}})
    r = await client.post(msg)
    assert r.status == 200 and "result" in r.json
