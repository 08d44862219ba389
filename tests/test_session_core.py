"""The session core (`mcpkit.server.session_core`), driven with plain calls and no I/O: one
dispatch for every admitted message, one listen loop, the ids in flight; and the structure
that keeps them single (issue 27 item 3: transports only move bytes and timers)."""

from __future__ import annotations

import ast
import asyncio
from typing import Any

import orjson

from legacy_support import init_message
from mcpkit import Server
from mcpkit.server.admission import (
    LEGACY,
    ClientNotification,
    ClientResponse,
    OpenSession,
    ServerRequest,
    admit,
)
from mcpkit.server.legacy.session import LegacySession
from mcpkit.server.session_core import ID_IN_USE, InFlight, dispatch, listen_frames
from mcpkit.server.subscriptions import SubscriptionHub
from mcpkit.server.transports.legacy_stdio import StdioOutbox
from support import ROOT, rpc, scaled

TRANSPORTS = ROOT / "src/mcpkit/server/transports"
#: What a transport would tell apart to dispatch (memory refuses all but requests: no ladder).
ADMISSIONS = {"OpenSession", "ClientNotification", "ClientResponse"}


class Recorder:
    """A `Handler` that says which action it was asked for (and the method, where it has one)."""

    def _said(self, action: str, ctx: str, message: Any = None) -> str:
        method = getattr(message, "method", None)
        return " ".join(part for part in (action, method, ctx) if part)

    def call(self, request: ServerRequest, ctx: str) -> str:
        return self._said("call", ctx, request)

    def listen(self, request: ServerRequest, ctx: str) -> str:
        return self._said("listen", ctx)

    def session_request(self, request: ServerRequest, ctx: str) -> str:
        return self._said("session_request", ctx, request)

    def open_session(self, request: OpenSession, ctx: str) -> str:
        return self._said("open_session", ctx)

    def notification(self, note: ClientNotification, ctx: str) -> str:
        return self._said("notification", ctx, note)

    def response(self, response: ClientResponse, ctx: str) -> str:
        return self._said("response", ctx)

    def nothing(self, ctx: str) -> str:
        return self._said("nothing", ctx)


def shout(text: str) -> str:
    return text.upper()


def make_server() -> Server:
    server = Server("core")
    server.tool()(shout)
    return server


def _route(server: Server, message: dict[str, Any], session: Any = None) -> str:
    outbox = StdioOutbox(lambda data: None) if session is not None else None
    return dispatch(
        admit(server, orjson.dumps(message), None, session, None, outbox), Recorder(), "ctx"
    )


def test_each_kind_of_message_has_one_action() -> None:
    server = make_server()
    assert _route(server, rpc("tools/call", {"name": "shout"})) == "call tools/call ctx"
    assert _route(server, rpc("subscriptions/listen", {"notifications": {}})) == "listen ctx"
    assert _route(server, init_message()) == "open_session ctx"
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert _route(server, cancel) == "notification notifications/cancelled ctx"


async def test_a_session_s_messages_go_to_the_session() -> None:
    server = make_server()
    session = LegacySession(server, "test")
    session.initialize(init_message()["params"])
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    assert _route(server, listing, session) == "session_request tools/list ctx"
    stray = {"jsonrpc": "2.0", "id": 99, "result": {}}
    assert _route(server, stray, session) in ("response ctx", "nothing ctx")
    session.close()


async def test_listen_frames_are_ack_notes_and_the_final_result() -> None:
    hub = SubscriptionHub()
    await hub.start()
    sub = hub.open(7, {"toolsListChanged": True}, {"toolsListChanged"})
    frames = listen_frames(sub, 7, None)
    ack = await anext(frames)
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    hub.publish("notifications/tools/list_changed")
    note = await asyncio.wait_for(anext(frames), scaled(5))
    assert note is not None and note["method"] == "notifications/tools/list_changed"
    hub.close_all()
    final = await asyncio.wait_for(anext(frames), scaled(5))
    assert final is not None and final["id"] == 7 and "result" in final
    assert [frame async for frame in frames] == []
    await hub.stop()


async def test_quiet_listen_frames_tick_and_an_overflow_ends_without_a_result() -> None:
    hub = SubscriptionHub(max_queue=4)
    await hub.start()
    sub = hub.open(1, {"toolsListChanged": True}, {"toolsListChanged"})
    frames = listen_frames(sub, 1, 0.01)
    await anext(frames)  # acknowledgement
    assert await asyncio.wait_for(anext(frames), scaled(5)) is None  # a keep-alive tick
    for _ in range(50):
        hub.publish("notifications/tools/list_changed")
    rest = [frame async for frame in frames]
    assert all(frame is None or "result" not in frame for frame in rest)
    hub.close(sub)
    await hub.stop()


async def _wait(future: asyncio.Future[None]) -> None:
    await future


async def test_in_flight_ids_are_unique_and_cancelled_by_id() -> None:
    in_flight: InFlight[asyncio.Task[None]] = InFlight()
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    task = asyncio.get_running_loop().create_task(_wait(never))
    in_flight.start("a", task)
    assert in_flight.in_use("a") and not in_flight.in_use("b") and len(in_flight) == 1
    in_flight.forget("a", None)  # not its task: still in flight
    assert in_flight.in_use("a")
    in_flight.cancel(ClientNotification("notifications/cancelled", {"requestId": "b"}, LEGACY))
    assert in_flight.in_use("a")
    in_flight.cancel(ClientNotification("notifications/cancelled", {"requestId": "a"}, LEGACY))
    assert not in_flight.in_use("a")
    await asyncio.wait([task], timeout=scaled(5))
    assert task.cancelled()
    assert ID_IN_USE.code == -32600


def _source(name: str) -> ast.Module:
    return ast.parse((TRANSPORTS / name).read_text())


def test_the_listen_loop_and_the_dispatch_exist_once() -> None:
    """No transport walks a subscription itself or tells admissions apart by type."""
    for path in sorted(TRANSPORTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ("acknowledgement", "next"):
                value = ast.unparse(node.value)
                assert "sub" not in value, f"{path.name}:{node.lineno} walks a subscription"
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call):
                kinds = {ast.unparse(c) for c in node.comparators} & ADMISSIONS
                assert ast.unparse(node.left.func) != "type" or not kinds, (
                    f"{path.name}:{node.lineno} dispatches by type"
                )


async def test_a_session_s_cancelled_request_keeps_its_id_until_its_task_ends() -> None:
    """2025-11-25: the cancelled request answers nothing and frees its id as its task ends;
    on stdio's modern wire the id is free at once (the test above)."""
    in_flight: InFlight[asyncio.Task[None]] = InFlight()
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    task = asyncio.get_running_loop().create_task(_wait(never))
    in_flight.start(3, task)
    note = ClientNotification("notifications/cancelled", {"requestId": 3}, LEGACY)
    in_flight.cancel(note, forget=False)
    assert in_flight.in_use(3)
    await asyncio.wait([task], timeout=scaled(5))
    assert task.cancelled()
    in_flight.forget(3, task)
    assert not in_flight.in_use(3)
