"""Graceful drain on SIGTERM, with real processes: the instance stops accepting, says it is
draining, ends listen streams with their result (SUB-11) and 2025-11-25 GET streams, finishes
requests in flight, answers what still arrives on open connections with `Connection: close`,
starts nothing long-lived (503 + Retry-After), fails the tasks it could not finish with a
reason (TASK-17), and exits."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from mcpkit.protocol.tasks import TASKS_EXTENSION
from mcpkit.server.request_state import generate_key
from processes import REDIS, RedisProcess
from scale_support import Connection, Instance
from support import LEGACY_HEADERS, headers_for, legacy_initialize, meta, rpc, scaled

pytestmark = [
    pytest.mark.timing,
    pytest.mark.skipif(REDIS is None, reason="redis-server is not installed"),
]

TASKS = {"extensions": {TASKS_EXTENSION: {}}}


def call(name: str, caps: Any = None, **arguments: Any) -> dict[str, Any]:
    message = rpc("tools/call", {"name": name, "arguments": arguments})
    message["params"]["_meta"] = meta(caps or {})
    return message


def task_rpc(method: str, **params: Any) -> dict[str, Any]:
    message = rpc(method, params)
    message["params"]["_meta"] = meta(TASKS)
    return message


def initialize(id: int = 0) -> bytes:
    return orjson.dumps(legacy_initialize(id))


async def post(s: aiohttp.ClientSession, url: str, message: dict[str, Any]) -> dict[str, Any]:
    async with s.post(url + "/mcp", data=orjson.dumps(message), headers=headers_for(message)) as r:
        assert r.headers["content-type"].startswith("application/json"), await r.text()
        return await r.json()  # type: ignore[no-any-return]


@pytest.fixture
async def pair(tmp_path: Path) -> AsyncIterator[tuple[RedisProcess, Instance, Instance]]:
    redis = RedisProcess(aof=False)
    await redis.start()
    env = {**os.environ, "MCPKIT_STATE_KEYS": generate_key(), "MCPKIT_DRAIN_TIMEOUT": "2"}
    a = Instance("a", redis.url, env, tmp_path / "a.log")
    b = Instance("b", redis.url, env, tmp_path / "b.log")
    await a.start()
    await b.start()
    yield redis, a, b
    for inst in (a, b):
        if inst.proc is not None:
            await inst.stop()
    await redis.close()


async def test_sigterm_drains_then_exits(pair: tuple[RedisProcess, Instance, Instance]) -> None:
    _redis, a, b = pair
    async with aiohttp.ClientSession() as s:
        # What is in flight on A when it gets SIGTERM:
        listen = rpc(
            "subscriptions/listen",
            {"notifications": {"resourceSubscriptions": ["scale://changes"]}},
        )
        stream = await s.post(
            a.url + "/mcp", data=orjson.dumps(listen), headers=headers_for(listen)
        )
        ack = orjson.loads((await stream.content.readuntil(b"\n\n"))[5:])
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        short = (await post(s, a.url, call("job", TASKS, seconds=0.3)))["result"]["taskId"]
        long = (await post(s, a.url, call("job", TASKS, seconds=60)))["result"]["taskId"]
        async with s.post(a.url + "/mcp", data=initialize(), headers=LEGACY_HEADERS) as r:
            session = r.headers["mcp-session-id"]
        assert session.startswith("a.")  # the instance's prefix: what a proxy routes on
        legacy = {**LEGACY_HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        note = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        async with s.post(a.url + "/mcp", data=note, headers=legacy) as r:
            assert r.status == 202
        get_stream = await s.get(a.url + "/mcp", headers=legacy)
        await get_stream.content.readuntil(b"\n\n")  # the priming event
        slow = asyncio.create_task(post(s, a.url, call("slow", seconds=1.0)))
        idle = await Connection.open(a.port)  # a proxy's kept-alive connection
        state = call("state")
        status, headers, _ = await idle.post(orjson.dumps(state), headers_for(state))
        assert status == 200 and headers.get("connection") != "close"
        spare = await Connection.open(a.port)
        probe = await Connection.open(a.port)  # a balancer's readiness probe
        assert (await probe.get("/readyz"))[0] == 200
        assert a.proc is not None

        a.proc.send_signal(signal.SIGTERM)

        # The listen stream ends with its result (SUB-11): the client opens it elsewhere.
        final = orjson.loads(
            (await asyncio.wait_for(stream.content.readuntil(b"\n\n"), scaled(10)))[5:]
        )
        assert final["id"] == listen["id"] and final["result"]["resultType"] == "complete"
        assert await stream.content.read() == b""
        stream.release()
        # Not ready any more: balancers send nothing new here.
        status, _, body = await probe.get("/readyz")
        assert status == 503 and body == b"not ready", body
        # The 2025-11-25 GET stream ends too (its client reconnects, gets 404, initializes).
        await asyncio.wait_for(get_stream.content.read(), scaled(10))  # to its end
        get_stream.release()
        # No new connection is accepted any more.
        with pytest.raises(OSError):
            await Connection.open(a.port)
        # A request on a connection already open is served, and that connection closed.
        status, headers, body = await idle.post(orjson.dumps(state), headers_for(state))
        assert status == 200 and headers["connection"] == "close"
        assert orjson.loads(body)["result"]["structuredContent"]["draining"] is True
        assert await idle.closed_by_peer()
        # Nothing long-lived starts on a draining instance: refused, retry elsewhere.
        status, headers, body = await spare.post(initialize(), LEGACY_HEADERS)
        assert status == 503 and headers["retry-after"] == "1"
        assert orjson.loads(body)["error"]["code"] == -31000
        # The request in flight is answered.
        assert (await asyncio.wait_for(slow, scaled(10)))["result"]["content"][0][
            "text"
        ] == "slept on a"
        # A exits once its tasks finished or failed (MCPKIT_DRAIN_TIMEOUT=2).
        code = await asyncio.wait_for(a.proc.wait(), scaled(15))
        assert code in (0, -signal.SIGTERM)
        a.proc = None
        done = (await post(s, b.url, task_rpc("tasks/get", taskId=short)))["result"]
        assert (
            done["status"] == "completed"
            and done["result"]["content"][0]["text"] == "job done on a"
        )
        failed = (await post(s, b.url, task_rpc("tasks/get", taskId=long)))["result"]
        assert failed["status"] == "failed"
        assert failed["error"]["data"] == {"reason": "instance-stopped"}
        idle.close()
        spare.close()
        probe.close()
