"""Ownership everywhere: one matrix, every per-caller object x owner / other principal /
anonymous token (`mcpkit.server.ownership`). Another caller's object is answered exactly
like an unknown one (2025-11-25 sessions: 404; tasks: -32602 "Task not found", TASK-19;
listen `taskIds`: not followed; `requestState`: -32602, MRTR-10).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from legacy_support import SessionClient, init_message
from mcpkit import Context, Server
from mcpkit.auth import AccessToken, BearerAuth
from mcpkit.protocol.tasks import TASKS_EXTENSION
from support import AsgiClient, headers_for, rpc, scaled

TASKS = {"extensions": {TASKS_EXTENSION: {}}, "elicitation": {}}
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
OWNER, OTHER, ANONYMOUS = "alice", "bob", "anon-2"


class Verifier:
    """`alice`, `bob`: principals. `anon-N`: a verified token naming no subject or client."""

    async def verify(self, token: str) -> AccessToken:
        if token.startswith("anon"):
            return AccessToken(None, token=token)
        return AccessToken(token, token=token)


def make_app() -> Any:
    server = Server("owned")
    release = asyncio.Event()

    @server.tool(task="required")
    async def job() -> str:
        await release.wait()
        return "done"

    @server.tool()
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit("Sure?", CONFIRM, key="sure")
        return f"{ctx.principal}: {answer.action}"

    auth = BearerAuth(
        Verifier(),
        resource="http://127.0.0.1:8000/mcp",
        authorization_servers=["https://as.example"],
    )
    return server.http_app(auth=auth)


def headers(message: dict[str, Any], token: str) -> dict[str, str]:
    return {**headers_for(message), "authorization": f"Bearer {token}"}


async def post(http: AsgiClient, token: str, method: str, **params: Any) -> Any:
    message = rpc(method, params, caps=TASKS)
    return await http.post(message, headers(message, token))


# -- the operations: each returns True when the caller was served as the owner ---------------
Op = Callable[[Any, str], Awaitable[bool]]


class Fixture:
    """Objects made by OWNER: a session, a task, a sealed requestState."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.http = AsgiClient(app)
        self.session = SessionClient(app)
        self.task_id = ""
        self.state = ""

    async def make(self) -> None:
        init = await self.session.call(init_message(), authorization=f"Bearer {OWNER}")
        assert init.status == 200
        self.session.session_id = init.headers["mcp-session-id"]
        created = await post(self.http, OWNER, "tools/call", name="job")
        self.task_id = created.result["taskId"]
        asked = await post(self.http, OWNER, "tools/call", name="confirm")
        self.state = asked.result["requestState"]


async def session_post(f: Fixture, token: str) -> bool:
    conn = await f.session.call(
        {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, authorization=f"Bearer {token}"
    )
    assert conn.status in (200, 404), conn.body
    return conn.status == 200


async def session_get(f: Fixture, token: str) -> bool:
    conn = await f.session.open(
        None, http_method="GET", headers=f.session.headers(authorization=f"Bearer {token}")
    )
    assert conn.status in (200, 404)
    conn.disconnect.set()  # type: ignore[attr-defined]
    await asyncio.wait_for(conn.task, scaled(5))  # type: ignore[attr-defined]
    return conn.status == 200


async def session_delete(f: Fixture, token: str) -> bool:
    conn = await f.session.open(
        None, http_method="DELETE", headers=f.session.headers(authorization=f"Bearer {token}")
    )
    await asyncio.wait_for(conn.task, scaled(5))  # type: ignore[attr-defined]
    assert conn.status in (200, 404)
    return conn.status == 200


def task_op(method: str, **extra: Any) -> Op:
    async def op(f: Fixture, token: str) -> bool:
        reply = await post(f.http, token, method, taskId=f.task_id, **extra)
        if reply.code is not None:
            assert reply.code == -32602 and "Task not found" in reply.json["error"]["message"]
            return False
        return True

    return op


async def listen_task(f: Fixture, token: str) -> bool:
    message = rpc(
        "subscriptions/listen", {"notifications": {"taskIds": [f.task_id]}}, caps=TASKS, id=9
    )
    async with f.http.stream(message, headers(message, token)) as stream:
        ack = await stream.next()
    assert isinstance(ack, dict)
    honoured = ack["params"]["notifications"].get("taskIds", [])
    return honoured == [f.task_id]


async def mrtr_retry(f: Fixture, token: str) -> bool:
    reply = await post(
        f.http,
        token,
        "tools/call",
        name="confirm",
        requestState=f.state,
        inputResponses={"sure": {"action": "decline"}},
    )
    if reply.code is not None:
        assert reply.code == -32602 and "principal" in reply.json["error"]["message"]
        return False
    return True


OPERATIONS: dict[str, Op] = {
    "session POST": session_post,
    "session GET": session_get,
    "tasks/get": task_op("tasks/get"),
    "tasks/update": task_op("tasks/update", inputResponses={}),
    "listen taskIds": listen_task,
    "requestState": mrtr_retry,
    # Last: they end what they act on.
    "tasks/cancel": task_op("tasks/cancel"),
    "session DELETE": session_delete,
}


@pytest.fixture
async def owned() -> AsyncIterator[Fixture]:
    fixture = Fixture(make_app())
    await fixture.make()
    yield fixture
    await fixture.session.close()
    fixture.app.server.tasks.cancel_all()


@pytest.mark.parametrize("caller", [OTHER, ANONYMOUS])
@pytest.mark.parametrize("operation", list(OPERATIONS))
async def test_another_caller_cannot_use_it(owned: Fixture, operation: str, caller: str) -> None:
    assert not await OPERATIONS[operation](owned, caller)
    # ... and the refusal changed nothing: the owner still can.
    assert await OPERATIONS[operation](owned, OWNER)


async def test_the_owner_can_use_everything(owned: Fixture) -> None:
    for name, operation in OPERATIONS.items():
        assert await operation(owned, OWNER), name


async def test_two_anonymous_tokens_share_nothing(owned: Fixture) -> None:
    created = await post(owned.http, "anon-1", "tools/call", name="job")
    owned.task_id = created.result["taskId"]
    assert await OPERATIONS["tasks/get"](owned, "anon-1")
    assert not await OPERATIONS["tasks/get"](owned, "anon-2")
