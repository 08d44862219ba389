"""Scale-out on real parts: nginx (deploy/nginx/mcpkit.conf) in front of three mcpkit
instances sharing a redis-server with AOF, under mixed load (tools/call, MRTR rounds, tasks,
listen streams, 2025-11-25 sessions) while one instance gets SIGTERM and starts again and
Redis restarts. No request fails except as the design declares (tests/scale_load.py lists
the declared outcomes); every task ends; every listener hears every change published after it
(re)opened its stream. Also: plain calls cost Redis nothing, and a task whose instance is
SIGKILLed fails with its reason within the lease.

The load lasts MCPKIT_CLUSTER_SECONDS (8 s under `make test`; CI runs 25 s as its own step).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from mcpkit.protocol.tasks import TERMINAL
from mcpkit.server.request_state import generate_key
from processes import REDIS, RedisProcess
from scale_load import TASKS, Load, where
from scale_support import NGINX, Instance, Nginx
from support import scaled

pytestmark = [
    pytest.mark.serial,  # three instances, nginx and Redis under sustained load: alone
    pytest.mark.skipif(NGINX is None, reason="nginx is not installed (.ci/run installs it)"),
    pytest.mark.skipif(REDIS is None, reason="redis-server is not installed"),
]

SECONDS = float(os.environ.get("MCPKIT_CLUSTER_SECONDS", "8"))
LEASE = 2.0  # SCALE_LEASE: the instances' task lease


@dataclass
class Cluster:
    redis: RedisProcess
    instances: dict[str, Instance]
    nginx: Nginx
    tmp: Path

    def logs(self) -> str:
        return (
            "\n".join(
                f"--- {name}\n{inst.log.read_text()[-3000:]}"
                for name, inst in self.instances.items()
                if inst.log.exists()
            )
            + f"\n--- nginx\n{self.nginx.errors()[-3000:]}"
        )


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    redis = RedisProcess(aof=True)
    await redis.start()
    env = {
        **os.environ,
        "MCPKIT_STATE_KEYS": generate_key(),
        "MCPKIT_DRAIN_TIMEOUT": "5",
        "SCALE_LEASE": str(LEASE),
    }
    instances = {n: Instance(n, redis.url, env, tmp_path / f"{n}.log") for n in "abc"}
    await asyncio.gather(*(inst.start() for inst in instances.values()))
    nginx = Nginx(tmp_path, {n: inst.port for n, inst in instances.items()})
    await nginx.start()
    yield Cluster(redis, instances, nginx, tmp_path)
    await nginx.close()
    for inst in instances.values():
        if inst.proc is not None and inst.proc.returncode is None:
            await inst.stop()
    await redis.close()


async def test_mixed_load_through_a_rolling_restart_and_a_redis_restart(
    cluster: Cluster,
) -> None:
    load = Load(cluster.nginx.url)
    load.streams = [[] for _ in range(3)]
    workers = [
        *(asyncio.create_task(load.run(load.plain)) for _ in range(4)),
        *(asyncio.create_task(load.run(load.mrtr)) for _ in range(2)),
        asyncio.create_task(load.run(load.task, "job")),
        asyncio.create_task(load.run(load.task, "ask_job")),
        asyncio.create_task(load.run(load.change)),
        *(asyncio.create_task(load.run(load.legacy)) for _ in range(3)),
    ]
    listeners = [asyncio.create_task(load.run(load.listen, i)) for i in range(3)]
    loop = asyncio.get_running_loop()
    start = loop.time()
    try:
        await asyncio.sleep(SECONDS * 0.25)  # the load runs; then the events, at set times
        b = cluster.instances["b"]
        assert await b.stop(signal.SIGTERM) in (0, -signal.SIGTERM)  # drained, exited
        await b.start()  # on its port: nginx takes it back
        await asyncio.sleep(max(0.0, start + SECONDS * 0.6 - loop.time()))
        await cluster.redis.restart()  # SIGTERM (Redis writes its AOF), then start
        await asyncio.sleep(max(0.0, start + SECONDS - loop.time()))
    finally:
        load.stopping.set()
        _, busy = await asyncio.wait(workers, timeout=scaled(30))
        for worker in busy:
            worker.cancel()
    unended = {t: status for t, status in load.tasks.items() if status not in TERMINAL}
    assert not busy, f"busy after the load: {list(map(where, busy))} {unended}\n{cluster.logs()}"
    assert loop.time() - start >= SECONDS
    await load.settle_listeners(15)
    for listener in listeners:
        listener.cancel()
    await asyncio.gather(*listeners, return_exceptions=True)
    # Every task ended (completed: they are short, and a drain waits for them).
    try:
        async with aiohttp.ClientSession() as s, asyncio.timeout(scaled(30)):
            for task_id, status in load.tasks.items():
                while status not in TERMINAL:  # polling: tasks/get is how a client learns it
                    status = (await load.modern(s, "tasks/get", TASKS, taskId=task_id))["status"]
                    await asyncio.sleep(0.1)
                load.tasks[task_id] = status
    except TimeoutError:
        unended = {t: status for t, status in load.tasks.items() if status not in TERMINAL}
        pytest.fail(f"tasks not ended {scaled(30):g} s after the load: {unended}\n{cluster.logs()}")
    summary = (
        f"{SECONDS:g} s: {dict(load.counts)}; declared: {dict(load.declared)}; "
        f"tasks: {len(load.tasks)}; streams: {[len(s) for s in load.streams]}; "
        f"changes: {len(load.changes)}"
    )
    print(summary)
    assert not load.failures, f"{load.failures[:10]}\n{summary}\n{cluster.logs()}"
    assert set(load.tasks.values()) == {"completed"}, summary
    assert not load.missed(), f"{load.missed()}\n{summary}"
    # What the events should have caused, did: b's sessions were re-opened elsewhere, the
    # streams on b were ended with their result and opened again.
    assert load.declared["listen stream ended by a drain, opened again"] >= 1, summary
    assert load.counts["tools/call"] > 100 and load.counts["mrtr rounds"] > 10, summary


#: Redis commands that are not caused by calls: the event buses' subscriptions and stream reads
#: (they wait for events whether calls come or not), connection health checks, this test's INFO.
BACKGROUND = {
    "ping",
    "info",
    "subscribe",
    "unsubscribe",
    "psubscribe",
    "punsubscribe",
    "publish",
    "xread",
}


async def test_plain_calls_cost_redis_nothing(cluster: Cluster) -> None:
    """A plain call (no idempotency key, handle, task or single-use requestState) sends Redis
    no command, though every Redis-backed part is attached."""
    load = Load(cluster.nginx.url)
    async with aiohttp.ClientSession() as s:
        await load.plain(s)  # connections made, buses connected
        before = await cluster.redis.command_counts()
        for _ in range(1000):
            await load.plain(s)
        after = await cluster.redis.command_counts()
    caused = {
        name: after[name] - before.get(name, 0)
        for name in after
        if after[name] != before.get(name, 0) and name not in BACKGROUND
    }
    assert load.counts["tools/call"] == 1001
    assert caused == {}, caused  # INFO commandstats delta over 1000 plain calls


async def test_a_task_of_a_killed_instance_fails_within_the_lease(cluster: Cluster) -> None:
    """SIGKILL the instance running a task: another instance reports it `failed`, with the
    reason, within the lease (TASK-17: a JSON-RPC error; never stuck in `working`)."""
    a, b = cluster.instances["a"], cluster.instances["b"]
    on_a, on_b = Load(a.url), Load(b.url)
    async with aiohttp.ClientSession() as s:
        created = await on_a.modern(s, "tools/call", TASKS, name="job", arguments={"seconds": 600})
        task_id = created["taskId"]
        assert (await on_b.modern(s, "tasks/get", TASKS, taskId=task_id))["status"] == "working"
        loop = asyncio.get_running_loop()
        assert await a.stop(signal.SIGKILL) == -signal.SIGKILL
        killed = loop.time()
        while True:  # tasks/get is what a client does: poll it (no event crosses processes)
            got = await on_b.modern(s, "tasks/get", TASKS, taskId=task_id)
            if got["status"] != "working":
                break
            assert loop.time() - killed < LEASE + scaled(1), "still working well past the lease"
            await asyncio.sleep(0.05)
        elapsed = loop.time() - killed
    assert got["status"] == "failed" and elapsed <= LEASE + scaled(0.25), elapsed
    assert got["error"]["code"] == -32603
    assert got["error"]["data"] == {"reason": "lease-expired"}
    assert "stopped" in got["statusMessage"]
    a.proc = None  # killed: nothing to stop at teardown
