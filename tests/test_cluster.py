"""Two real server processes sharing one Redis and one key set (issue: many instances)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest

from mcpkit.server.request_state import generate_key
from processes import RedisProcess
from support import ROOT, free_port, headers_for, meta, post, record, rpc, scaled, wait_port

REDIS = shutil.which("redis-server")
pytestmark = pytest.mark.skipif(
    REDIS is None and not os.environ.get("CI"),
    reason="needs redis-server on PATH (apt-get install redis-server; .ci/run installs it)",
)


@pytest.fixture
async def cluster() -> AsyncIterator[tuple[str, str]]:
    assert REDIS is not None, "redis-server is required in CI"
    redis = RedisProcess()
    await redis.start()
    procs: list[asyncio.subprocess.Process] = []
    env = {**os.environ, "MCPKIT_STATE_KEYS": generate_key()}
    ports = []
    while len(ports) < 2:
        for _attempt in range(3):  # a port picked free can be taken before the server binds it
            port = free_port()
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                str(ROOT / "tests/servers/cluster_server.py"),
                str(port),
                redis.url,
                env=env,
                stderr=asyncio.subprocess.DEVNULL,
            )
            try:
                await wait_port(port, proc)
            except RuntimeError:
                if proc.returncode is None:
                    proc.kill()
                await proc.wait()
                continue
            procs.append(proc)
            ports.append(port)
            break
        else:
            raise RuntimeError("could not start a cluster instance")
    yield f"http://127.0.0.1:{ports[0]}", f"http://127.0.0.1:{ports[1]}"
    for proc in procs:
        proc.terminate()
    for proc in procs:
        await asyncio.wait_for(proc.wait(), scaled(10))
    await redis.close()


def with_caps(message: dict[str, Any]) -> dict[str, Any]:
    message["params"]["_meta"] = meta({"elicitation": {}})
    return message


async def subscription_count(s: aiohttp.ClientSession, url: str, wait_drained: bool = False) -> int:
    _, msgs = await post(
        s,
        url,
        rpc(
            "tools/call",
            {"name": "subscription_count", "arguments": {"wait_drained": wait_drained}},
        ),
    )
    return int(msgs[0]["result"]["structuredContent"])


async def test_mrtr_round_moves_between_instances(cluster: tuple[str, str]) -> None:
    a, b = cluster
    async with aiohttp.ClientSession() as s:
        _, msgs = await post(s, a, with_caps(rpc("tools/call", {"name": "greet"})))
        first = msgs[0]["result"]
        assert first["resultType"] == "input_required"
        (key,) = first["inputRequests"]
        retry = rpc(
            "tools/call",
            {
                "name": "greet",
                "inputResponses": {key: {"action": "accept", "content": {"name": "Ann"}}},
                "requestState": first["requestState"],
            },
            id=2,
        )
        _, msgs = await post(s, b, with_caps(retry))
        assert msgs[0]["result"]["content"][0]["text"].startswith("Hello, Ann!")
        assert b.rsplit(":", 1)[1] in msgs[0]["result"]["content"][0]["text"]  # completed on B


async def test_changes_on_a_reach_listeners_on_b(cluster: tuple[str, str]) -> None:
    a, b = cluster
    listen = rpc(
        "subscriptions/listen",
        {"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["cluster://doc"]}},
        id="sub-b",
    )
    hdrs = headers_for(listen)
    hdrs.pop("host")
    async with aiohttp.ClientSession() as s:
        async with s.post(b + "/mcp", data=orjson.dumps(listen), headers=hdrs) as stream:
            ack = orjson.loads((await stream.content.readuntil(b"\n\n"))[5:])
            record("subscriptions/listen", ack)
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            assert await subscription_count(s, b) == 1
            await post(s, a, rpc("tools/call", {"name": "change"}))  # caused on A
            seen = set()
            for _ in range(2):
                note = orjson.loads(
                    (await asyncio.wait_for(stream.content.readuntil(b"\n\n"), scaled(10)))[5:]
                )
                record("subscriptions/listen", note)
                assert note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-b"
                seen.add(note["method"])
            assert seen == {"notifications/tools/list_changed", "notifications/resources/updated"}
        # The stream is closed: B frees the subscription (B answers once it has none open).
        assert await subscription_count(s, b, wait_drained=True) == 0


async def test_tasks_need_routing_by_task_id(cluster: tuple[str, str]) -> None:
    """Tasks live in the process that runs them: route `tasks/*` by `Mcp-Name` (the task id,
    TASK-16), which carries the instance's prefix. Elsewhere the answer is a prompt -32602."""
    a, b = cluster
    tasks = {"extensions": {"io.modelcontextprotocol/tasks": {}}}

    def task_call(method: str, params: dict[str, Any]) -> dict[str, Any]:
        message = rpc(method, params)
        message["params"]["_meta"] = meta(tasks)
        return message

    async with aiohttp.ClientSession() as s:
        _, msgs = await post(s, a, task_call("tools/call", {"name": "job"}))
        task_id = msgs[0]["result"]["taskId"]
        assert task_id.startswith(a.rsplit(":", 1)[1] + ".")
        start = asyncio.get_running_loop().time()
        _, msgs = await post(s, b, task_call("tasks/get", {"taskId": task_id}))
        assert msgs[0]["error"]["code"] == -32602
        assert asyncio.get_running_loop().time() - start < scaled(2)  # prompt, not a hang
        _, msgs = await post(s, a, task_call("tasks/get", {"taskId": task_id}))
        assert msgs[0]["result"]["taskId"] == task_id


async def test_legacy_session_on_the_wrong_instance_is_a_prompt_404(
    cluster: tuple[str, str],
) -> None:
    """Sticky routing is required for 2025-11-25 sessions (their SSE streams and pending
    server→client requests live in one process). Without it the failure is clear and fast: B
    answers A's session id with 404, the client's signal to initialize again (on B)."""
    a, b = cluster
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "tests", "version": "0"},
        },
    }
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    async with aiohttp.ClientSession() as s:
        async with s.post(a + "/mcp", data=orjson.dumps(init), headers=headers) as r:
            assert r.status == 200
            sid = r.headers["mcp-session-id"]
        hdrs = {**headers, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        ping = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        async with s.post(a + "/mcp", data=ping, headers=hdrs) as r:
            assert r.status == 200 and (await r.json())["result"] == {}
        start = asyncio.get_running_loop().time()
        async with s.post(b + "/mcp", data=ping, headers=hdrs) as r:
            assert r.status == 404
            assert (await r.json())["error"]["code"] == -32600
        assert asyncio.get_running_loop().time() - start < scaled(2)  # prompt, not a hang
        async with s.post(b + "/mcp", data=orjson.dumps(init), headers=headers) as r:
            assert r.status == 200 and r.headers["mcp-session-id"] != sid  # recovered on B


async def test_changes_on_a_reach_a_legacy_session_on_b(cluster: tuple[str, str]) -> None:
    """2025-11-25 sessions hear changes made on any instance (the event bus), on their GET stream."""
    a, b = cluster
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "tests", "version": "0"},
        },
    }
    async with aiohttp.ClientSession() as s:
        async with s.post(b + "/mcp", data=orjson.dumps(init), headers=headers) as r:
            hdrs = {
                **headers,
                "mcp-session-id": r.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
        note = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        async with s.post(b + "/mcp", data=note, headers=hdrs) as r:
            assert r.status == 202
        async with s.get(b + "/mcp", headers=hdrs) as stream:
            priming = await asyncio.wait_for(stream.content.readuntil(b"\n\n"), scaled(10))
            assert priming.startswith(b"id: 0-")
            await post(s, a, rpc("tools/call", {"name": "change"}))  # caused on A
            event = await asyncio.wait_for(stream.content.readuntil(b"\n\n"), scaled(10))
            data = orjson.loads(event.split(b"data: ", 1)[1])
            assert data == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
