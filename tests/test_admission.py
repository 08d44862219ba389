"""The front door (`mcpkit.server.admission`): every message, every transport, both eras.

The three messages that once ended a process or answered 500: a `notifications/cancelled`
whose `requestId` is an array or object (stdio: TypeError, exit 1; a 2025-11-25 HTTP
session: a plain-text 500), and `logging/setLevel` with an array `level` (-32603).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from legacy_support import SessionClient, init_message
from mcpkit import Server
from mcpkit.server.admission import (
    LEGACY,
    MODERN,
    ClientNotification,
    MirroredHeaders,
    OpenSession,
    Refused,
    ServerRequest,
)
from support import ROOT, AsgiClient, headers_for, rpc, scaled

BAD_IDS: list[Any] = [[1], {"a": 1}, None, 1.5, True]


def make_server() -> Server:
    server = Server("door")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


# -- plain calls: what the door says ---------------------------------------------------------
def test_a_modern_request_carries_its_era_explicitly() -> None:
    server = make_server()
    admitted = server.admit(orjson.dumps(rpc("tools/call", {"name": "echo"})))
    assert isinstance(admitted, ServerRequest)
    assert admitted.era is MODERN and admitted.outbox is None and admitted.channel is None
    assert admitted.meta.protocol_version == "2026-07-28"


def test_initialize_opens_a_session_only_on_a_dual_era_server() -> None:
    init = init_message()
    assert isinstance(make_server().admit(orjson.dumps(init)), OpenSession)
    modern_only = Server("modern", legacy=False)
    with pytest.raises(Refused) as refused:
        modern_only.admit(orjson.dumps(init))
    assert refused.value.error.code == -32022 and refused.value.request_id == 0  # VER-12


@pytest.mark.parametrize("bad", BAD_IDS)
def test_a_malformed_notification_is_refused_as_a_notification(bad: Any) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": bad}}
    with pytest.raises(Refused) as refused:
        make_server().admit(orjson.dumps(note))
    assert refused.value.notification and refused.value.error.code == -32602


def test_unknown_notifications_pass_untouched() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/whatever", "params": {"x": [1]}}
    admitted = make_server().admit(orjson.dumps(note))
    assert isinstance(admitted, ClientNotification) and admitted.cancelled_id is None


def test_header_checks_come_before_meta_and_version() -> None:  # TR-HDR-19
    server = make_server()
    message = rpc("tools/call", {"name": "echo"})
    del message["params"]["_meta"]
    wrong_method = MirroredHeaders("2026-07-28", "tools/list", "echo")
    with pytest.raises(Refused) as refused:
        server.admit(orjson.dumps(message), wrong_method)
    assert refused.value.error.code == -32020  # not -32602 for the missing _meta
    right = MirroredHeaders("2026-07-28", "tools/call", "echo")
    with pytest.raises(Refused) as refused:
        server.admit(orjson.dumps(message), right)
    assert refused.value.error.code == -32602


def test_meta_then_version_then_shape() -> None:
    server = make_server()
    message = rpc("tools/call", {"name": ["echo"]})
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "1999-01-01"
    with pytest.raises(Refused) as refused:
        server.admit(orjson.dumps(message))
    assert refused.value.error.code == -32022  # the version first, then the shape
    with pytest.raises(Refused) as refused:
        server.admit(orjson.dumps(rpc("tools/call", {"name": ["echo"]})))
    assert refused.value.error.code == -32602 and "name" in refused.value.error.message


# -- stdio: a real process -----------------------------------------------------------------
@pytest.fixture
async def proc() -> AsyncIterator[asyncio.subprocess.Process]:
    p = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "tests/servers/basic_server.py"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    yield p
    if p.returncode is None:
        p.kill()
    await p.wait()


async def exchange(p: asyncio.subprocess.Process, *messages: dict[str, Any]) -> dict[str, Any]:
    assert p.stdin is not None and p.stdout is not None
    for message in messages:
        p.stdin.write(orjson.dumps(message) + b"\n")
    line = await asyncio.wait_for(p.stdout.readline(), scaled(10))
    assert line, "the server exited"
    reply: dict[str, Any] = orjson.loads(line)
    return reply


INIT = init_message(id="init")


async def test_stdio_survives_a_cancel_of_an_unhashable_id(
    proc: asyncio.subprocess.Process,
) -> None:
    notes = [
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": bad}}
        for bad in BAD_IDS
    ]
    ping = rpc("tools/call", {"name": "echo", "arguments": {"text": "alive"}}, id=1)
    assert (await exchange(proc, *notes, ping))["result"]["content"][0]["text"] == "alive"
    # In a 2025-11-25 session too, and logging/setLevel with a level of the wrong shape.
    assert "result" in await exchange(proc, INIT)
    level = {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": ["x"]}}
    reply = await exchange(proc, *notes, level)
    assert reply["id"] == 2 and reply["error"]["code"] == -32602
    assert proc.returncode is None
    assert proc.stderr is not None
    logged = await asyncio.wait_for(proc.stderr.readline(), scaled(10))
    assert b"dropped a client message" in logged  # one line per dropped notification


# -- HTTP: both eras -------------------------------------------------------------------------
async def test_http_session_refuses_a_malformed_notification_with_400() -> None:
    app = make_server().http_app()
    client = SessionClient(app)
    await client.initialize()
    for bad in BAD_IDS:
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": bad}}
        conn = await client.call(note)
        assert conn.status == 400, conn.body  # TR-HTTP-11, never a 500
        assert conn.json["error"]["code"] == -32602 and "id" not in conn.json
    level = await client.call(
        {"jsonrpc": "2.0", "id": 7, "method": "logging/setLevel", "params": {"level": {}}}
    )
    assert level.json["error"]["code"] == -32602 and level.json["id"] == 7
    assert (await client.request("tools/list", id=8))["result"]["tools"]
    await client.close()
    app.legacy.close()


async def test_modern_http_notifications() -> None:
    http = AsgiClient(make_server().http_app())
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}}
    refused = await http.post(note, headers_for(note))
    assert refused.status == 400  # TR-HTTP-11
    fine = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert (await http.post(fine, headers_for(fine))).status == 202  # TR-HTTP-14: lenient
    other = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(other, headers_for(other))).status == 202


def test_a_session_request_carries_its_outbox_and_channel() -> None:
    from mcpkit.server.legacy import LegacySession
    from mcpkit.server.transports.legacy_stdio import StdioOutbox

    server = make_server()
    session = LegacySession(server, "s")
    session.initialize(INIT["params"])  # type: ignore[arg-type]
    outbox = StdioOutbox(lambda data: None)
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    admitted = server.admit(orjson.dumps(message), session=session, outbox=outbox)
    assert isinstance(admitted, ServerRequest)
    assert admitted.era is LEGACY and admitted.outbox is outbox and admitted.channel is not None
    assert admitted.meta.protocol_version == "2025-11-25"
