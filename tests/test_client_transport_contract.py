"""The client transport contract (`mcpkit.client.transport.Transport`): a third-party transport
that implements only the protocol works with `Client`; what it does not declare fails with a
one-line error instead of being probed for; the wrappers (telemetry, auth) keep the contract."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import AsyncGenerator
from pathlib import Path

import orjson
import pytest

from mcpkit import Context, Server
from mcpkit.client import Client, ClientSession
from mcpkit.client.errors import ClientError, ConnectionClosed
from mcpkit.client.transport import Transport, TransportCapabilities
from mcpkit.protocol.jsonrpc import JSONObject, Notification, RequestId, Response
from support import ROOT, scaled

BASIC = [sys.executable, str(ROOT / "tests/servers/basic_server.py")]


class LinePipe:
    """A minimal third-party transport: newline-delimited JSON-RPC to a subprocess, one request
    at a time, notifications skipped. It declares nothing beyond the default capabilities."""

    capabilities = TransportCapabilities()

    def __init__(self, command: list[str]) -> None:
        self.command = command
        self.proc: asyncio.subprocess.Process | None = None
        self.lock = asyncio.Lock()

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )

    async def request(self, request_id: RequestId, method: str, params: JSONObject) -> Response:
        assert self.proc is not None and self.proc.stdin and self.proc.stdout
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        async with self.lock:
            self.proc.stdin.write(orjson.dumps(message) + b"\n")
            await self.proc.stdin.drain()
            while True:
                line = await self.proc.stdout.readline()
                if not line:
                    raise ConnectionClosed("the server process exited")
                data = orjson.loads(line)
                if data.get("id") == request_id and "method" not in data:
                    return Response(request_id, data.get("result"), data.get("error"))

    async def close(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()
            await self.proc.wait()


class Relay:
    """A third-party transport declaring capabilities: notifications and listen streams, here
    relayed to an in-process mcpkit server (as a recording or tunnelling transport might)."""

    def __init__(self, server: Server) -> None:
        self.inner = server.memory_transport(self.note)
        self.notes: list[Notification] = []
        self.sent: list[str] = []
        self.capabilities = TransportCapabilities(
            kind="relay", notifications=self.inner.capabilities.notifications, stream=self.stream
        )

    async def note(self, message: Notification) -> None:
        self.notes.append(message)

    async def start(self) -> None:
        await self.inner.start()

    async def request(self, request_id: RequestId, method: str, params: JSONObject) -> Response:
        self.sent.append(method)
        return await self.inner.request(request_id, method, params)

    async def stream(
        self, request_id: RequestId, method: str, params: JSONObject
    ) -> AsyncGenerator[JSONObject, None]:
        self.sent.append(method)
        async for message in self.inner.stream(request_id, method, params):
            yield message

    async def close(self) -> None:
        await self.inner.close()


def progress_server() -> Server:
    server = Server("relayed")

    @server.tool()
    async def slow(ctx: Context) -> str:
        """Reports progress twice."""
        await ctx.report_progress(1, 2)
        await ctx.report_progress(2, 2)
        return "done"

    return server


async def test_a_minimal_transport_works_with_client() -> None:
    transport = LinePipe(BASIC)
    assert isinstance(transport, Transport)
    async with asyncio.timeout(scaled(30)), Client(transport) as client:
        assert client.era == "modern"
        assert "echo" in [tool.name for tool in await client.list_tools()]
        assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"


async def test_what_a_minimal_transport_does_not_declare_fails_in_one_line() -> None:
    async with asyncio.timeout(scaled(30)), Client(LinePipe(BASIC)) as client:
        with pytest.raises(ClientError, match=r"custom transport declares no listen streams"):
            client.subscribe(tools=True)
        with pytest.raises(ClientError, match=r"progress needs notifications") as info:
            await client.call_tool("echo", {"text": "hi"}, progress=lambda *_: None)
        assert "\n" not in str(info.value)


async def test_a_transport_declaring_capabilities_gets_notifications_and_streams() -> None:
    server = progress_server()
    relay = Relay(server)
    seen: list[float] = []
    async with Client(relay) as client:
        result = await client.call_tool("slow", progress=lambda p, _t, _m: seen.append(p))
        assert result.text == "done"
        assert [n.method for n in relay.notes] == ["notifications/progress"] * 2
        async with client.subscribe(tools=True) as sub:
            server.tool(name="extra", description="Extra.")(lambda: "")
            note = await asyncio.wait_for(sub.__anext__(), scaled(5))
            assert note.method == "notifications/tools/list_changed"
    assert "subscriptions/listen" in relay.sent
    assert seen == [1, 2]  # the client's handler was added beside the relay's own


async def test_client_session_takes_a_transport_too() -> None:
    async with asyncio.timeout(scaled(30)), ClientSession(LinePipe(BASIC)) as session:
        assert "echo" in [tool["name"] for tool in await session.list_tools()]


def test_something_else_is_refused_in_one_line() -> None:
    with pytest.raises(TypeError, match=r"cannot connect to a object: .*Writing a transport"):
        Client(object())


async def test_the_telemetry_decorator_keeps_the_contract() -> None:
    from mcpkit.telemetry import Telemetry
    from telemetry_support import Recorded

    recorded = Recorded()
    try:
        telemetry = Telemetry(recorded.tracer_provider, recorded.meter_provider)
        async with Client(progress_server(), telemetry=telemetry) as client:
            wire, inner = client.wire, client.transport
            assert wire is not inner and isinstance(wire, Transport)
            assert wire.capabilities.stream is inner.capabilities.stream
            assert (await client.call_tool("slow")).text == "done"
        assert "tools/call slow" in recorded.names()
    finally:
        recorded.close()


def test_http_declares_its_capabilities_and_auth_wraps_its_exchange() -> None:
    from mcpkit.client.auth import OAuth
    from mcpkit.client.auth.exchange import AuthorizedExchange
    from mcpkit.client.http import HttpTransport

    plain = HttpTransport("http://127.0.0.1:1/mcp")
    caps = plain.capabilities
    assert (caps.kind, caps.era_key, caps.reopens_streams) == ("http", plain.url, True)
    assert caps.credentials_key is None and not isinstance(plain.exchange, AuthorizedExchange)
    authorized = HttpTransport("http://127.0.0.1:1/mcp", auth=OAuth())
    assert isinstance(authorized.exchange, AuthorizedExchange)
    assert authorized.capabilities.credentials_key is not None


_PROBES = re.compile(r"\b(getattr|hasattr|setattr|vars)\(|__dict__")


def test_the_client_never_probes_attributes() -> None:
    """Transports are known by their declared capabilities (issue 27). The lazy-module hook
    `__getattr__` of the package `__init__` files is not a probe."""
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "src/mcpkit/client").rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if _PROBES.search(line.replace("__getattr__", ""))
    ]
    assert found == []


def test_client_layer_has_no_concrete_transport_checks() -> None:
    """legacy.py and connect.py know transports only through the contract."""
    for name in ("legacy.py", "connect.py", "client.py", "era.py"):
        text = Path(ROOT / "src/mcpkit/client" / name).read_text()
        assert "isinstance(transport, " not in text and "StdioTransport)" not in text, name


async def test_a_ready_transport_also_delivers_to_the_client() -> None:
    """A transport built by the caller, with its own handler or none, still reaches the
    client's progress callbacks (it used to drop them silently)."""
    own: list[Notification] = []
    seen: list[float] = []
    async with Client(progress_server().memory_transport(own.append)) as client:
        await client.call_tool("slow", progress=lambda p, _t, _m: seen.append(p))
    assert seen == [1, 2] and len(own) == 2


async def test_server_requests_are_answered_by_one_function_for_every_transport() -> None:
    # stdio and legacy HTTP answer a server→client request the same way: the handler's result,
    # its MCPError as itself, anything else as -32603 naming the failure.
    from mcpkit.client.transport import answer_request
    from mcpkit.protocol.errors import MCPError
    from mcpkit.protocol.jsonrpc import Request

    async def handler(method: str, params: JSONObject) -> JSONObject:
        if method == "roots/list":
            return {"roots": []}
        if method == "sampling/createMessage":
            raise MCPError("no model here", code=-32601)
        raise RuntimeError("the form broke")

    def answer(raw: bytes) -> JSONObject:
        decoded: JSONObject = orjson.loads(raw)
        return decoded

    ok = answer(await answer_request(handler, Request(1, "roots/list", None)))
    assert ok == {"jsonrpc": "2.0", "id": 1, "result": {"roots": []}}
    refused = answer(await answer_request(handler, Request(2, "sampling/createMessage", {})))
    assert refused["error"]["code"] == -32601 and refused["error"]["message"] == "no model here"
    broken = answer(await answer_request(handler, Request("3", "elicitation/create", {})))
    assert broken["id"] == "3" and broken["error"]["code"] == -32603
    assert broken["error"]["message"] == "client handler failed: the form broke"
