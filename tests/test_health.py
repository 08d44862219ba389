"""`/healthz` and `/readyz`: beside the MCP endpoint, GET/HEAD only, no auth, a status word,
any Host (probes address the pod by IP) while the endpoint keeps its DNS-rebinding checks;
readiness from `server.readiness` (checks, draining), logged on stdio."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcpkit import Server
from mcpkit.auth import BearerAuth
from mcpkit.server.readiness import Readiness
from mcpkit.server.redis_backend import RedisEventBus
from support import AsgiClient, headers_for, rpc, scaled

POD = {"host": "10.1.2.3:8000"}  # what a kubelet or a balancer sends


def probe(app: AsgiClient, path: str, method: str = "GET", **headers: str) -> Any:
    return app.post(None, {**POD, **headers}, raw=b"", http_method=method, path=path)


async def test_liveness_and_readiness_answer_any_host_with_one_word() -> None:
    server = Server("shop")
    app = AsgiClient(server.http_app())
    live = await probe(app, "/healthz")
    assert (live.status, live.body) == (200, b"ok")
    assert live.headers["content-type"].startswith("text/plain")
    assert live.headers["cache-control"] == "no-store"
    ready = await probe(app, "/readyz")
    assert (ready.status, ready.body) == (200, b"ready")
    head = await probe(app, "/readyz", "HEAD")
    assert (head.status, head.body, head.headers["content-length"]) == (200, b"", "5")
    # The MCP endpoint keeps its DNS-rebinding defence for the same Host (TR-HTTP-02).
    message = rpc("server/discover")
    refused = await app.post(message, {**headers_for(message), **POD})
    assert refused.status == 403


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
async def test_only_get_and_head(method: str) -> None:
    app = AsgiClient(Server("shop").http_app())
    for path in ("/healthz", "/readyz"):
        reply = await probe(app, path, method)
        assert reply.status == 405 and reply.headers["allow"] == "GET, HEAD"


async def test_not_ready_while_a_check_fails_or_draining(caplog: Any) -> None:
    server = Server("shop")
    app = AsgiClient(server.http_app())
    up = True
    server.readiness.add_check("database", lambda: up)
    assert (await probe(app, "/readyz")).status == 200
    up = False
    with caplog.at_level(logging.INFO, "mcpkit.health"):
        down = await probe(app, "/readyz")
        assert (down.status, down.body) == (503, b"not ready")
        assert (await probe(app, "/healthz")).status == 200  # alive all the same
        up = True
        assert (await probe(app, "/readyz")).status == 200
    # Transitions are logged once each (stdio servers report readiness this way).
    assert [r.getMessage() for r in caplog.records] == ["not ready: database", "ready"]
    server.readiness.drain()
    assert (await probe(app, "/readyz")).status == 503
    assert server.readiness.failing() == ["draining"]


def test_a_check_that_raises_counts_as_failing() -> None:
    readiness = Readiness()

    def broken() -> bool:
        raise RuntimeError("no")

    readiness.add_check("broken", broken)
    assert not readiness.ready and readiness.failing() == ["broken"]
    readiness.remove_check("broken")
    assert readiness.ready


async def test_no_auth_on_the_probes_and_they_can_be_turned_off() -> None:
    class Deny:
        async def verify(self, token: str) -> None:
            return None

    auth = BearerAuth(
        Deny(),  # type: ignore[arg-type]
        resource="https://shop.example/mcp",
        authorization_servers=["https://as.example"],
    )
    app = AsgiClient(Server("shop").http_app(auth=auth))
    assert (await probe(app, "/readyz")).status == 200
    message = rpc("server/discover")
    assert (await app.post(message, headers_for(message))).status == 401
    off = AsgiClient(Server("shop").http_app(health=False))
    assert (await probe(off, "/healthz")).status == 404


async def test_a_stdio_server_reports_readiness_in_its_log(caplog: Any) -> None:
    """No /readyz on stdio: the watcher checks and logs each change."""
    import asyncio

    from mcpkit.server.readiness import watch

    readiness = Readiness()
    checked = asyncio.Event()

    def bus() -> bool:
        checked.set()
        return False

    readiness.add_check("redis bus", bus)
    with caplog.at_level(logging.INFO, "mcpkit.health"):
        task = asyncio.create_task(watch(readiness, interval=3600))
        await checked.wait()
        task.cancel()
    assert [r.getMessage() for r in caplog.records] == ["not ready: redis bus"]


async def start_redis(port: int) -> Any:
    """A real redis-server on `port` (no persistence), once it accepts connections."""
    import asyncio
    import shutil

    exe = shutil.which("redis-server")
    assert exe is not None, "redis-server is required (apt-get install redis-server)"
    proc = await asyncio.create_subprocess_exec(
        exe,
        *("--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"),
        stdout=asyncio.subprocess.DEVNULL,
    )
    from support import wait_port

    await wait_port(port, proc)
    return proc


async def until_status(app: AsgiClient, status: int, seconds: float = 30) -> None:
    """Poll /readyz until it answers `status` (the bus notices an outage on its own time: no
    event to wait on)."""
    import asyncio

    async with asyncio.timeout(scaled(seconds)):
        while True:
            if (await probe(app, "/readyz")).status == status:
                return
            await asyncio.sleep(0.05)


@pytest.mark.timing
@pytest.mark.skipif(
    not hasattr(
        __import__("mcpkit.server.redis_backend").server.redis_backend.RedisEventBus, "health"
    ),
    reason="needs the Redis event bus that reports its health (issue 12)",
)
async def test_not_ready_while_the_redis_bus_is_down() -> None:
    from support import free_port

    port = free_port()
    redis = await start_redis(port)
    server = Server("shop", event_bus=RedisEventBus(f"redis://127.0.0.1:{port}/0"))
    app = AsgiClient(server.http_app())
    await server.startup()
    try:
        await until_status(app, 200)
        redis.kill()  # the dependency goes away: balancers must stop sending work here
        await redis.wait()
        await until_status(app, 503)
        assert (await probe(app, "/readyz")).body == b"not ready"
        assert (await probe(app, "/healthz")).status == 200  # alive all the same
        assert server.readiness.failing() == ["event bus"]
        redis = await start_redis(port)  # back: ready again once the bus reconnects
        await until_status(app, 200)
    finally:
        await server.shutdown()
        if redis.returncode is None:
            redis.kill()
            await redis.wait()
