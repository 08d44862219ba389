"""Tasks shared through Redis (`RedisTaskStore`): two server instances in this process, one real
`redis-server`. Any instance answers `tasks/*` for any task; the running one holds a lease; a
lapsed lease fails the task with a reason (TASK-17); answers and cancels reach the handler
from either side. (The cluster tests do the same with processes, nginx and SIGKILL.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from mcpkit import Context, Server
from mcpkit.protocol.errors import STORE_UNAVAILABLE
from mcpkit.protocol.tasks import TASKS_EXTENSION
from mcpkit.server.auth.access import AccessToken, current_access
from mcpkit.server.redis_config import RedisConfig
from mcpkit.server.tasks.redis_store import RedisTaskStore
from mcpkit.server.tasks.store import TaskRecord, TaskView
from processes import REDIS, RedisProcess
from support import AsgiClient, meta, rpc, scaled

pytestmark = pytest.mark.skipif(REDIS is None, reason="redis-server is not installed")

TASKS = {"extensions": {TASKS_EXTENSION: {}}}
WITH_INPUT = {**TASKS, "elicitation": {}}
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


class Node:
    """One instance: a server with its own RedisTaskStore on the shared Redis."""

    def __init__(
        self, redis_url: str, gate: asyncio.Event, lease: float, ttl: float = 3600.0
    ) -> None:
        self.store = RedisTaskStore(
            RedisConfig(redis_url, prefix="t:", socket_timeout=1.0, max_backoff=0.2),
            poll_interval_ms=50,
            lease_seconds=lease,
            ttl_seconds=ttl,
        )
        server = Server("tasks", tasks=self.store)
        self.server = server
        self.http = AsgiClient(server.http_app())
        self.seen: list[dict[str, Any]] = []
        self.heard = asyncio.Condition()
        previous = self.store.on_change

        def hook(task: TaskRecord | TaskView) -> None:
            previous(task)
            self.seen.append(task.detailed())
            asyncio.get_running_loop().create_task(self._notify())

        self.store.on_change = hook

        @server.tool(task="optional")
        async def job(label: str = "x") -> str:
            await gate.wait()
            return f"done {label}"

        @server.tool(task="optional")
        async def confirm(ctx: Context) -> str:
            answer = await ctx.elicit("Sure?", CONFIRM, key="sure")
            return f"ok={answer.content['ok']}"

    async def _notify(self) -> None:
        async with self.heard:
            self.heard.notify_all()

    async def until(self, check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first task change seen here (local or from the other instance) that passes."""
        async with self.heard:
            await asyncio.wait_for(
                self.heard.wait_for(lambda: any(map(check, self.seen))), scaled(10)
            )
        return next(d for d in self.seen if check(d))

    async def rpc(self, method: str, caps: Any = TASKS, **params: Any) -> dict[str, Any]:
        msg = rpc(method, params)
        msg["params"]["_meta"] = meta(caps)
        return (await self.http.post(msg)).json


@pytest.fixture
async def redis() -> AsyncIterator[RedisProcess]:
    server = RedisProcess(aof=False)
    await server.start()
    yield server
    await server.close()


@pytest.fixture
def gate() -> asyncio.Event:
    return asyncio.Event()


@pytest.fixture
async def nodes(redis: RedisProcess, gate: asyncio.Event) -> AsyncIterator[tuple[Node, Node]]:
    a, b = Node(redis.url, gate, 30.0), Node(redis.url, gate, 30.0)
    await a.server.startup()
    await b.server.startup()
    yield a, b
    gate.set()
    await a.server.shutdown()
    await b.server.shutdown()


async def start_task(node: Node, tool: str, caps: Any = TASKS) -> str:
    reply = await node.rpc("tools/call", caps, name=tool, arguments={})
    assert reply["result"]["resultType"] == "task", reply
    return str(reply["result"]["taskId"])


def status(task_id: str, *wanted: str) -> Callable[[dict[str, Any]], bool]:
    return lambda d: d["taskId"] == task_id and d["status"] in wanted


async def test_any_instance_answers_for_a_task_running_on_another(
    nodes: tuple[Node, Node], gate: asyncio.Event
) -> None:
    a, b = nodes
    task_id = await start_task(a, "job")
    got = (await b.rpc("tasks/get", taskId=task_id))["result"]
    assert got["status"] == "working" and got["taskId"] == task_id  # durable at once (TASK-07)
    gate.set()
    await b.until(status(task_id, "completed"))  # A's change, heard on B's event stream
    got = (await b.rpc("tasks/get", taskId=task_id))["result"]
    assert got["status"] == "completed"
    assert got["result"]["content"][0]["text"] == "done x"
    assert a.store.get(task_id, None) is None  # written: A reads it from Redis too
    assert (await a.rpc("tasks/get", taskId=task_id))["result"]["result"] == got["result"]


async def test_answers_given_on_another_instance_reach_the_handler(
    nodes: tuple[Node, Node],
) -> None:
    a, b = nodes
    task_id = await start_task(a, "confirm", WITH_INPUT)
    await b.until(status(task_id, "input_required"))
    got = (await b.rpc("tasks/get", WITH_INPUT, taskId=task_id))["result"]
    assert got["inputRequests"]["sure"]["method"] == "elicitation/create"
    bad = await b.rpc(
        "tasks/update",
        WITH_INPUT,
        taskId=task_id,
        inputResponses={"sure": {"action": "accept", "content": {"ok": "yes"}}},
    )
    assert bad["error"]["code"] == -32602  # checked where it was given, nothing taken
    good = await b.rpc(
        "tasks/update",
        WITH_INPUT,
        taskId=task_id,
        inputResponses={
            "sure": {"action": "accept", "content": {"ok": True}},
            "unknown": {"action": "decline"},  # not outstanding: ignored (TASK-13)
        },
    )
    assert good["result"]["resultType"] == "complete"
    done = await b.until(status(task_id, "completed"))
    assert done["result"]["content"][0]["text"] == "ok=True"


async def test_answers_reach_a_question_redis_has_not_heard_of_yet(
    nodes: tuple[Node, Node],
) -> None:
    """A asked (and told its client so) but has not written the question to Redis yet: an
    answer given on B then is kept for A, not dropped as answering nothing."""
    a, b = nodes
    a.store._loops[0].cancel()  # A's writer stops: Redis keeps the task as `working`
    task_id = await start_task(a, "confirm", WITH_INPUT)
    await a.until(status(task_id, "input_required"))  # asked, on A
    assert (await b.rpc("tasks/get", WITH_INPUT, taskId=task_id))["result"]["status"] == "working"
    answer = {"sure": {"action": "accept", "content": {"ok": True}}}
    got = await b.rpc("tasks/update", WITH_INPUT, taskId=task_id, inputResponses=answer)
    assert got["result"]["resultType"] == "complete"
    done = await a.until(status(task_id, "completed"))  # A took it (A's own view)
    assert done["result"]["content"][0]["text"] == "ok=True"


async def test_a_cancel_on_another_instance_stops_the_handler(nodes: tuple[Node, Node]) -> None:
    a, b = nodes
    task_id = await start_task(a, "job")
    reply = await b.rpc("tasks/cancel", taskId=task_id)
    assert reply["result"]["resultType"] == "complete"
    await a.until(status(task_id, "cancelled"))
    assert (await b.rpc("tasks/get", taskId=task_id))["result"]["status"] == "cancelled"


async def test_another_callers_task_is_unknown_on_every_instance(
    nodes: tuple[Node, Node],
) -> None:
    a, b = nodes
    token = current_access.set(AccessToken(token="t1", subject="alice"))
    try:
        task_id = await start_task(a, "job")
        assert (await b.rpc("tasks/get", taskId=task_id))["result"]["status"] == "working"
    finally:
        current_access.reset(token)
    token = current_access.set(AccessToken(token="t2", subject="mallory"))
    try:
        for node in (a, b):  # TASK-19: the same answer as an unknown task
            for method in ("tasks/get", "tasks/cancel"):
                assert (await node.rpc(method, taskId=task_id))["error"]["code"] == -32602
    finally:
        current_access.reset(token)


@pytest.mark.timing
async def test_a_lapsed_lease_fails_the_task_with_its_reason(
    redis: RedisProcess, gate: asyncio.Event
) -> None:
    a, b = Node(redis.url, gate, 0.3), Node(redis.url, gate, 0.3)
    await b.server.startup()
    try:
        task_id = await start_task(a, "job")
        a.store._loops[0].cancel()  # A stops writing and renewing, as a dead instance does
        a.store._loops[1].cancel()
        assert (await b.rpc("tasks/get", taskId=task_id))["result"]["status"] == "working"
        failed = await b.until(status(task_id, "failed"))  # B follows it: its sweep fails it
        assert failed["error"]["code"] == -32603
        assert failed["error"]["data"] == {"reason": "lease-expired"}
        got = (await b.rpc("tasks/get", taskId=task_id))["result"]
        assert got["status"] == "failed" and got["statusMessage"].startswith("The server")
    finally:
        gate.set()
        await b.server.shutdown()
        await a.server.shutdown()


@pytest.mark.timing
async def test_an_idle_instance_ends_expired_tasks_on_time(
    redis: RedisProcess, gate: asyncio.Event
) -> None:
    """Nobody asks: the running instance's timer stops the work at the TTL (long before its
    lease keeper's next round), and Redis forgets the task at the same moment, so every
    instance answers -32602 (TASK-18); no other instance runs anything for it."""
    a, b = Node(redis.url, gate, 60.0, ttl=1.0), Node(redis.url, gate, 60.0, ttl=1.0)
    await a.server.startup()
    await b.server.startup()
    try:
        task_id = await start_task(a, "job")
        record = a.store.get(task_id, None)
        assert record is not None and record.runner is not None
        assert (await b.rpc("tasks/get", taskId=task_id))["result"]["status"] == "working"
        async with asyncio.timeout(scaled(1 + 3)):  # the lease keeper's round: 20 s
            await asyncio.gather(record.runner, return_exceptions=True)
        assert record.status == "failed" and record.error is not None
        assert record.error["data"] == {"reason": "ttl-expired"}
        assert len(a.store) == 0 and len(b.store) == 0
        for node in (a, b):
            assert (await node.rpc("tasks/get", taskId=task_id))["error"]["code"] == -32602
    finally:
        gate.set()
        await b.server.shutdown()
        await a.server.shutdown()


@pytest.mark.timing
async def test_a_drained_instance_fails_what_it_could_not_finish(
    nodes: tuple[Node, Node],
) -> None:
    a, b = nodes
    task_id = await start_task(a, "job")
    await a.server.drain(0.05)
    refused = await a.rpc("tools/call", name="job", arguments={})
    assert refused["error"]["code"] == -31000  # no new task on a draining instance
    got = (await b.rpc("tasks/get", taskId=task_id))["result"]
    assert got["status"] == "failed"
    assert got["error"]["data"] == {"reason": "instance-stopped"}


async def test_listen_streams_on_another_instance_hear_task_changes(
    nodes: tuple[Node, Node], gate: asyncio.Event
) -> None:
    a, b = nodes
    task_id = await start_task(a, "job")
    listen = rpc("subscriptions/listen", {"notifications": {"taskIds": [task_id, "nope"]}})
    listen["params"]["_meta"] = meta(TASKS)
    async with b.http.stream(listen) as stream:
        ack = await stream.next()
        assert isinstance(ack, dict)
        assert ack["params"]["notifications"] == {"taskIds": [task_id]}  # only known tasks
        gate.set()
        note = await stream.next()
        assert isinstance(note, dict) and note["method"] == "notifications/tasks"
        assert note["params"]["status"] == "completed"  # A's change, on B's stream (TASK-15)
        assert note["params"]["result"]["content"][0]["text"] == "done x"


async def test_without_redis_a_task_request_is_a_retryable_refusal(
    redis: RedisProcess, nodes: tuple[Node, Node]
) -> None:
    a, b = nodes
    task_id = await start_task(a, "job")
    await redis.kill()
    reply = await b.http.post(
        {
            **rpc("tasks/get", {"taskId": task_id}),
            "params": {"taskId": task_id, "_meta": meta(TASKS)},
        }
    )
    assert reply.status == 503 and reply.headers["retry-after"] == "1"
    assert reply.json["error"]["code"] == STORE_UNAVAILABLE
    refused = await b.rpc("tools/call", name="job", arguments={})
    assert refused["error"]["code"] == STORE_UNAVAILABLE
