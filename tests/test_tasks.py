"""The tasks extension on the server (CHECKLIST TASK-*), in process over the HTTP app.

Tools wait on events the test sets, and the test awaits a task's own runner to see it settle:
no sleeps, no polling loops.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from legacy_support import SessionClient
from mcpkit import Context, InternalError, Server, TaskStore, ToolError
from mcpkit.protocol.tasks import TASKS_EXTENSION
from mcpkit.server.auth.access import AccessToken, current_access
from mcpkit.server.tasks.store import TaskRecord
from support import AsgiClient, headers_for, meta, rpc, scaled, until

TASKS = {"extensions": {TASKS_EXTENSION: {}}}
WITH_INPUT = {**TASKS, "elicitation": {}}
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


class Gate:
    """An event per test: the tool under test waits on it."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.started = asyncio.Event()


def make_server(gate: Gate, **options: Any) -> Server:
    server = Server("tasks", tasks=TaskStore(poll_interval_ms=250, **options))

    @server.tool()
    def plain(name: str) -> str:
        return f"Hello, {name}!"

    @server.tool(task="optional")
    async def job(label: str = "x") -> str:
        gate.started.set()
        await gate.open.wait()
        return f"done {label}"

    @server.tool(task="required")
    async def tool_error() -> str:
        raise ToolError("no such record")

    @server.tool(task="optional")
    async def protocol_error() -> str:
        raise InternalError("the backend is down")

    @server.tool(task="optional")
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit("Sure?", CONFIRM, key="sure")
        return f"ok={answer.content['ok']}" if answer.accepted else answer.action

    @server.tool(task="optional")
    async def pair(ctx: Context) -> str:
        a, b = await ctx.gather(
            ctx.elicit("A?", CONFIRM, key="a"), ctx.elicit("B?", CONFIRM, key="b")
        )
        return f"{a.content['ok']}/{b.content['ok']}"

    @server.tool(task="optional")
    async def asks_twice(ctx: Context) -> str:
        await ctx.elicit("Once?", CONFIRM, key="same")
        await ctx.elicit("Twice?", CONFIRM, key="same")
        return "unreachable"

    @server.tool(task="required", task_start="handler")
    async def staged(quick: bool, ctx: Context) -> str:
        answer = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="name"
        )
        name = answer.content["name"]
        if quick:
            return f"quick {name}"
        became = await ctx.run_as_task("working on it")
        ctx.set_status(f"serving {name}")
        await gate.open.wait()
        return f"{name} in task {ctx.task_id is not None and became}"

    return server


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
def server(gate: Gate) -> Server:
    return make_server(gate)


@pytest.fixture
async def http(server: Server) -> AsyncIterator[AsgiClient]:
    yield AsgiClient(server.http_app())
    server.tasks.cancel_all()


def call(
    name: str, arguments: dict[str, Any] | None = None, caps: Any = TASKS, **extra: Any
) -> dict[str, Any]:
    msg = rpc("tools/call", {"name": name, "arguments": arguments or {}, **extra})
    msg["params"]["_meta"] = meta(caps)
    return msg


def task_rpc(method: str, caps: Any = TASKS, **params: Any) -> dict[str, Any]:
    msg = rpc(method, params)
    msg["params"]["_meta"] = meta(caps)
    return msg


async def settled(server: Server, task_id: str) -> TaskRecord:
    record = server.tasks.get(task_id, None)
    assert record is not None
    if record.runner is not None:
        await asyncio.gather(record.runner, return_exceptions=True)
    return record


async def get(http: AsgiClient, task_id: str) -> dict[str, Any]:
    result: dict[str, Any] = (await http.post(task_rpc("tasks/get", taskId=task_id))).result
    return result


# -- negotiation -------------------------------------------------------------------------------
async def test_discover_advertises_the_extension(http: AsgiClient) -> None:
    caps = (await http.post(rpc("server/discover"))).result["capabilities"]
    assert caps["extensions"] == {TASKS_EXTENSION: {}}  # TASK-01
    assert "tasks" not in caps  # no 2025-style slot


async def test_no_task_tools_no_extension_and_no_methods() -> None:
    server = Server("plain")
    server.tool(name="x")(lambda: "x")
    http = AsgiClient(server.http_app())
    assert "extensions" not in (await http.post(rpc("server/discover"))).result["capabilities"]
    reply = await http.post(task_rpc("tasks/get", taskId="abc"))
    assert (reply.status, reply.code) == (404, -32601)


async def test_optional_tool_without_the_extension_answers_in_place(
    http: AsgiClient, gate: Gate
) -> None:
    gate.open.set()
    result = (await http.post(call("job", caps={}))).result
    assert result["resultType"] == "complete" and "taskId" not in result  # TASK-03
    assert result["content"] == [{"type": "text", "text": "done x"}]


async def test_required_tool_without_the_extension_is_32021(http: AsgiClient) -> None:
    reply = await http.post(call("tool_error", caps={}))
    assert (reply.status, reply.code) == (400, -32021)  # TASK-05
    assert reply.json["error"]["data"] == {"requiredCapabilities": TASKS}


async def test_tasks_methods_need_the_extension(http: AsgiClient) -> None:
    for method, extra in (
        ("tasks/get", {}),
        ("tasks/update", {"inputResponses": {}}),
        ("tasks/cancel", {}),
    ):
        reply = await http.post(task_rpc(method, caps={}, taskId="t", **extra))
        assert (reply.status, reply.code) == (400, -32021), method  # TASK-18


async def test_removed_2025_methods_are_unknown(http: AsgiClient) -> None:
    for method in ("tasks/result", "tasks/list"):
        reply = await http.post(task_rpc(method, taskId="t"))
        assert reply.code == -32601, method


async def test_sync_tool_and_legacy_task_param_stay_sync(http: AsgiClient) -> None:
    result = (await http.post(call("plain", {"name": "Ada"}, task={"ttl": 1000}))).result
    assert result["resultType"] == "complete" and "taskId" not in result


# -- lifecycle ---------------------------------------------------------------------------------
async def test_create_then_get_then_complete(http: AsgiClient, server: Server, gate: Gate) -> None:
    created = (await http.post(call("job", {"label": "a"}))).result
    assert created["resultType"] == "task"  # TASK-06
    assert set(created) == {
        "resultType",
        "taskId",
        "status",
        "createdAt",
        "lastUpdatedAt",
        "ttlMs",
        "pollIntervalMs",
        "_meta",
    }  # flat; no requestState, result, error or inputRequests
    assert created["status"] == "working" and created["ttlMs"] == 3_600_000
    assert created["pollIntervalMs"] == 250
    assert ISO.match(created["createdAt"]) and ISO.match(created["lastUpdatedAt"])
    assert len(created["taskId"]) >= 24  # TASK-19: unguessable
    working = await get(http, created["taskId"])  # TASK-07: resolvable at once
    assert working["resultType"] == "complete" and working["status"] == "working"
    assert "result" not in working and "inputRequests" not in working
    gate.open.set()
    await settled(server, created["taskId"])
    done = await get(http, created["taskId"])
    assert done["status"] == "completed"  # TASK-10
    assert done["result"]["content"] == [{"type": "text", "text": "done a"}]
    assert done["lastUpdatedAt"] >= done["createdAt"]


async def test_tool_error_is_completed_protocol_error_is_failed(
    http: AsgiClient, server: Server
) -> None:
    a = (await http.post(call("tool_error"))).result["taskId"]
    b = (await http.post(call("protocol_error"))).result["taskId"]
    await settled(server, a)
    await settled(server, b)
    completed, failed = await get(http, a), await get(http, b)
    assert completed["status"] == "completed" and completed["result"]["isError"] is True  # TASK-17
    assert failed["status"] == "failed" and "result" not in failed
    assert failed["error"] == {"code": -32603, "message": "the backend is down"}
    assert failed["statusMessage"] == "the backend is down"


async def test_cancel_acks_and_settles_cancelled(
    http: AsgiClient, server: Server, gate: Gate
) -> None:
    task_id = (await http.post(call("job"))).result["taskId"]
    await gate.started.wait()
    ack = (await http.post(task_rpc("tasks/cancel", taskId=task_id))).result
    assert {k: v for k, v in ack.items() if k != "_meta"} == {"resultType": "complete"}
    await settled(server, task_id)
    assert (await get(http, task_id))["status"] == "cancelled"
    again = (await http.post(task_rpc("tasks/cancel", taskId=task_id))).result  # terminal: same ack
    assert again["resultType"] == "complete" and "status" not in again


async def test_unknown_task_is_32602_everywhere(http: AsgiClient) -> None:
    for method, extra in (
        ("tasks/get", {}),
        ("tasks/update", {"inputResponses": {}}),
        ("tasks/cancel", {}),
    ):
        reply = await http.post(task_rpc(method, taskId="no-such-task", **extra))
        assert reply.code == -32602, method  # TASK-18
    reply = await http.post(task_rpc("tasks/get", taskId=7))
    assert reply.code in (-32602, -32020)


async def test_mcp_name_must_be_the_task_id(http: AsgiClient, server: Server, gate: Gate) -> None:
    task_id = (await http.post(call("job"))).result["taskId"]
    msg = task_rpc("tasks/get", taskId=task_id)
    reply = await http.post(msg, headers={**headers_for(msg), "mcp-name": "another-task"})
    assert (reply.status, reply.code) == (400, -32020)  # TASK-16
    missing = {k: v for k, v in headers_for(msg).items() if k != "mcp-name"}
    assert (await http.post(msg, headers=missing)).code == -32020


# -- input during a task -----------------------------------------------------------------------
async def test_input_required_then_update_resumes(http: AsgiClient, server: Server) -> None:
    task_id = (await http.post(call("confirm", caps=WITH_INPUT))).result["taskId"]
    await until(server, task_id, lambda r: r.status == "input_required")
    parked = await get(http, task_id)
    assert parked["status"] == "input_required"
    assert parked["inputRequests"]["sure"]["method"] == "elicitation/create"
    # A malformed answer is -32602 and leaves the question open; unknown keys are ignored.
    bad = await http.post(
        task_rpc(
            "tasks/update",
            taskId=task_id,
            inputResponses={"sure": {"action": "accept", "content": {"ok": "yes"}}},
        )
    )
    assert bad.code == -32602
    assert "sure" in (await get(http, task_id))["inputRequests"]
    ack = (
        await http.post(
            task_rpc(
                "tasks/update",
                taskId=task_id,
                inputResponses={"nope": {}, "sure": {"action": "accept", "content": {"ok": True}}},
            )
        )
    ).result
    assert ack["resultType"] == "complete" and "status" not in ack  # TASK-13
    await settled(server, task_id)
    assert (await get(http, task_id))["result"]["content"][0]["text"] == "ok=True"


async def test_partial_answers_keep_the_task_waiting(http: AsgiClient, server: Server) -> None:
    task_id = (await http.post(call("pair", caps=WITH_INPUT))).result["taskId"]
    await until(server, task_id, lambda r: len(r.pending) == 2)
    await http.post(
        task_rpc(
            "tasks/update",
            taskId=task_id,
            inputResponses={"a": {"action": "accept", "content": {"ok": True}}},
        )
    )
    waiting = await get(http, task_id)
    assert waiting["status"] == "input_required" and list(waiting["inputRequests"]) == ["b"]
    await http.post(
        task_rpc(
            "tasks/update",
            taskId=task_id,
            inputResponses={"b": {"action": "accept", "content": {"ok": False}}},
        )
    )
    await settled(server, task_id)
    assert (await get(http, task_id))["result"]["content"][0]["text"] == "True/False"


async def test_input_keys_are_never_reused(
    http: AsgiClient, server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    task_id = (await http.post(call("asks_twice", caps=WITH_INPUT))).result["taskId"]
    await until(server, task_id, lambda r: r.status == "input_required")
    await http.post(
        task_rpc(
            "tasks/update",
            taskId=task_id,
            inputResponses={"same": {"action": "accept", "content": {"ok": True}}},
        )
    )
    await settled(server, task_id)
    done = await get(http, task_id)  # TASK-12: the second ask fails the tool, not the protocol
    assert done["status"] == "completed" and done["result"]["isError"] is True
    # The handler's mistake is masked for the client and logged, with the reference, for us.
    assert "internal error (reference" in done["result"]["content"][0]["text"]
    assert "TASK-12" in caplog.text


async def test_task_input_needs_the_capability(http: AsgiClient, server: Server) -> None:
    task_id = (await http.post(call("confirm", caps=TASKS))).result["taskId"]
    await settled(server, task_id)
    failed = await get(http, task_id)  # TASK-11: the same rules as any elicitation
    assert failed["status"] == "failed" and failed["error"]["code"] == -32021


# -- input before the task (MRTR, TASK-08) ------------------------------------------------------
async def answer_staged(
    http: AsgiClient, first: dict[str, Any], *, quick: bool, name: str
) -> dict[str, Any]:
    """The MRTR retry of `staged` with its name answered."""
    retry = call(
        "staged",
        {"quick": quick},
        caps=WITH_INPUT,
        inputResponses={"name": {"action": "accept", "content": {"name": name}}},
        requestState=first["requestState"],
    )
    result: dict[str, Any] = (await http.post(retry)).result
    return result


async def test_mrtr_round_then_task(http: AsgiClient, server: Server, gate: Gate) -> None:
    first = (await http.post(call("staged", {"quick": False}, caps=WITH_INPUT))).result
    assert first["resultType"] == "input_required" and "taskId" not in first
    second = await answer_staged(http, first, quick=False, name="Alice")
    assert second["resultType"] == "task" and "requestState" not in second
    assert second["statusMessage"] == "working on it"
    await until(server, second["taskId"], lambda r: r.status_message == "serving Alice")
    assert (await get(http, second["taskId"]))["statusMessage"] == "serving Alice"
    gate.open.set()
    await settled(server, second["taskId"])
    final = await get(http, second["taskId"])
    assert final["result"]["content"][0]["text"] == "Alice in task True"


async def test_handler_that_finishes_first_answers_plainly(http: AsgiClient) -> None:
    first = (await http.post(call("staged", {"quick": True}, caps=WITH_INPUT))).result
    done = await answer_staged(http, first, quick=True, name="Bo")
    assert done["resultType"] == "complete" and done["content"][0]["text"] == "quick Bo"


# -- the store -----------------------------------------------------------------------------------
async def test_tasks_belong_to_their_principal(http: AsgiClient, server: Server) -> None:
    token = current_access.set(AccessToken(subject="alice"))
    try:
        task_id = (await http.post(call("tool_error"))).result["taskId"]
    finally:
        current_access.reset(token)
    assert server.tasks.get(task_id, "alice") is not None
    assert server.tasks.get(task_id, "mallory") is None  # TASK-19
    assert (await http.post(task_rpc("tasks/get", taskId=task_id))).code == -32602


async def test_expired_tasks_are_dropped_and_stopped(
    monkeypatch: pytest.MonkeyPatch, gate: Gate
) -> None:
    server = make_server(gate, ttl_seconds=10)
    http = AsgiClient(server.http_app())
    task_id = (await http.post(call("job"))).result["taskId"]
    record = server.tasks.get(task_id, None)
    assert record is not None and record.expires is not None
    runner = record.runner
    now = record.expires + 1
    monkeypatch.setattr("mcpkit.server.tasks.store.time.time", lambda: now)
    assert (await http.post(task_rpc("tasks/get", taskId=task_id))).code == -32602
    assert runner is not None
    await asyncio.gather(runner, return_exceptions=True)
    assert runner.cancelled() and len(server.tasks) == 0


@pytest.mark.timing
async def test_an_idle_server_ends_expired_tasks_on_time(gate: Gate) -> None:
    """Nobody asks about the task: the store's timer stops its work at the TTL and drops it.
    A listen stream would see it end `failed` (TASK-17); then it is unknown (TASK-18)."""
    server = make_server(gate, ttl_seconds=0.5)
    http = AsgiClient(server.http_app())
    task_id = (await http.post(call("job"))).result["taskId"]
    record = server.tasks.get(task_id, None)
    assert record is not None and record.runner is not None
    await gate.started.wait()
    # No request from here on: only the store itself can end the task.
    async with asyncio.timeout(scaled(0.5 + 2)):
        await asyncio.gather(record.runner, return_exceptions=True)
    assert record.status == "failed" and record.error is not None
    assert record.error["data"] == {"reason": "ttl-expired"}
    assert "time to live" in (record.status_message or "")
    assert len(server.tasks) == 0
    assert (await http.post(task_rpc("tasks/get", taskId=task_id))).code == -32602


async def test_one_expiry_timer_while_tasks_are_held(gate: Gate) -> None:
    """No timer on an idle store, one (not one per task) while it holds tasks, none after the
    server stops, and no task left running then."""
    server = make_server(gate, ttl_seconds=60)
    http = AsgiClient(server.http_app())
    await server.startup()
    assert server.tasks.expiry_due is None
    assert (await http.post(call("job"))).result["status"] == "working"
    due = server.tasks.expiry_due
    assert due is not None
    assert (await http.post(call("job"))).result["status"] == "working"
    assert server.tasks.expiry_due == due  # still set for the oldest task
    await server.shutdown()
    assert server.tasks.expiry_due is None and server.tasks.running == 0


async def test_live_task_cap(gate: Gate) -> None:
    server = make_server(gate, max_tasks=2)
    http = AsgiClient(server.http_app())
    finished = (await http.post(call("tool_error"))).result["taskId"]
    await settled(server, finished)
    running = (await http.post(call("job"))).result["taskId"]
    # Full: the oldest finished task makes room; running ones are never dropped.
    newest = (await http.post(call("job"))).result["taskId"]
    assert server.tasks.get(finished, None) is None
    assert server.tasks.get(running, None) and server.tasks.get(newest, None)
    reply = await http.post(call("job"))
    # A capacity refusal, not an internal error: an application code outside the reserved
    # range (BASE-17/19/23), HTTP 503 and Retry-After.
    assert reply.code == -31002 and "Too many tasks" in reply.json["error"]["message"]
    assert reply.status == 503 and reply.headers["retry-after"] == "5"
    assert reply.json["error"]["data"] == {"retryAfter": 5}
    server.tasks.cancel_all()


# -- status notifications (TASK-15) --------------------------------------------------------------
async def test_listen_for_task_status(http: AsgiClient, server: Server, gate: Gate) -> None:
    task_id = (await http.post(call("job"))).result["taskId"]
    refused = await http.post(
        task_rpc("subscriptions/listen", caps={}, notifications={"taskIds": [task_id]})
    )
    assert refused.code == -32021
    malformed = await http.post(
        task_rpc("subscriptions/listen", notifications={"taskIds": task_id})
    )
    assert malformed.code == -32602
    msg = task_rpc("subscriptions/listen", notifications={"taskIds": [task_id, "unknown"]})
    async with http.stream(msg) as stream:
        ack = await stream.next()
        while isinstance(ack, bytes):  # keep-alive comments
            ack = await stream.next()
        assert isinstance(ack, dict)
        assert ack["params"]["notifications"] == {"taskIds": [task_id]}
        gate.open.set()
        note = await stream.next()
        while isinstance(note, bytes):
            note = await stream.next()
        assert isinstance(note, dict) and note["method"] == "notifications/tasks"
        assert note["params"]["taskId"] == task_id and note["params"]["status"] == "completed"
        assert note["params"]["result"]["content"][0]["text"] == "done x"


# -- a legacy session runs task tools in place -------------------------------------------------
async def test_legacy_session_runs_task_tools_synchronously(server: Server, gate: Gate) -> None:
    app = server.http_app()
    client = SessionClient(app)
    init = (await client.initialize({})).json["result"]
    assert "extensions" not in init["capabilities"]
    gate.open.set()
    reply = await client.request("tools/call", {"name": "job", "arguments": {}})
    assert reply["result"]["content"] == [{"type": "text", "text": "done x"}]
    required = await client.request("tools/call", {"name": "tool_error", "arguments": {}})
    assert required["result"]["isError"] is True
    await client.close()
    app.legacy.close()
