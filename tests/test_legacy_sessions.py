"""Session hygiene (issue 5.4; the official SDK's leaks #3228, #3300, #1283): rejected requests
create nothing, DELETE and reaping free everything, a cap answers 503, and sticky routing fails
fast: an instance that does not know a session answers 404 at once, so the client re-initializes.
The clock is injected: expiry is driven by `reap()`, never by sleeping."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from typing import Any

from legacy_support import SessionClient, init_message, not_recorded
from mcpkit import Context, Server
from support import scaled


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_app(clock: Clock, **options: Any) -> Any:
    server = Server("hygiene")

    @server.tool()
    async def hello(ctx: Context) -> str:
        """Says hello (and logs it)."""
        await ctx.info("hello")
        return "hello"

    @server.resource("test://doc")
    async def doc() -> str:
        return "doc"

    return server.http_app(clock=clock, idle_timeout=60.0, **options)


async def one_cycle(app: Any, clock: Clock, i: int) -> None:
    """Probes that must not create a session, then one session ended one way or another."""
    probe = SessionClient(app)
    bad = await probe.call({"jsonrpc": "2.0", "id": i, "method": "initialize", "params": {}})
    assert bad.status == 400
    assert (await probe.call({"jsonrpc": "2.0", "id": i, "method": "tools/list"})).status == 400
    probe.session_id = f"forged-{i}"
    assert (await probe.call({"jsonrpc": "2.0", "id": i, "method": "ping"})).status == 404
    client = SessionClient(app)
    await client.initialize()
    await client.request("tools/call", {"name": "hello"}, id=i)
    await client.request("resources/subscribe", {"uri": "test://doc"}, id=i + 1)
    if i % 3 == 0:
        assert (await client.delete()).status == 200
    elif i % 3 == 1:
        stream = await client.open(None, http_method="GET")  # a GET stream, then a drop
        await stream.next()
        stream.disconnect.set()  # type: ignore[attr-defined]
        await asyncio.wait_for(stream.task, scaled(5))  # type: ignore[attr-defined]
    # else: simply abandoned
    await client.close()


async def cycles(app: Any, clock: Clock, start: int, count: int) -> None:
    with not_recorded():
        for i in range(start, start + count):
            await one_cycle(app, clock, i)
            if i % 100 == 99:
                clock.now += 61
                app.sessions.reap()


async def test_a_thousand_abandoned_sessions_leave_nothing_behind() -> None:
    clock = Clock()
    app = make_app(clock, max_sessions=200)
    await cycles(app, clock, 0, 200)  # warm-up: caches, interned strings, code paths
    clock.now += 61
    app.sessions.reap()
    assert len(app.sessions) == 0
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    await cycles(app, clock, 1000, 1000)  # reaps every 100 cycles, as the reaper would
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    stats = app.sessions.stats()
    assert len(app.sessions) == 0 and stats["live"] == 0
    assert stats["opened"] == 1200 and stats["opened"] == stats["closed"] + stats["reaped"]
    assert stats["rejected"] == 0
    print(f"1,000 sessions: {stats}, traced memory grew by {grown} bytes")
    assert grown < 64 * 1024, f"memory grew by {grown} bytes over 1,000 sessions"
    app.legacy.close()


async def test_cap_answers_503_and_idle_sessions_make_room() -> None:
    clock = Clock()
    app = make_app(clock, max_sessions=2)
    first, second, third = SessionClient(app), SessionClient(app), SessionClient(app)
    await first.initialize()
    await second.initialize()
    full = await third.call(init_message())
    assert full.status == 503 and full.headers["retry-after"] == "5"
    assert full.json["error"]["message"].startswith("Too many open sessions")
    # BASE-17/23: an application code outside the reserved range, not -32000.
    assert full.json["error"]["code"] == -31001
    assert app.sessions.stats()["rejected"] == 1
    assert (await first.delete()).status == 200
    await third.initialize()  # room again after a DELETE
    stream = await second.open(None, http_method="GET")  # busy: never reaped while attached
    clock.now += 3600
    fourth = SessionClient(app)
    await fourth.initialize()  # the idle one (third) was reaped to make room
    assert app.sessions.get(second.session_id) is not None
    assert app.sessions.get(third.session_id) is None
    assert (await third.call({"jsonrpc": "2.0", "id": 1, "method": "ping"})).status == 404
    stream.disconnect.set()  # type: ignore[attr-defined]
    await asyncio.wait_for(stream.task, scaled(5))  # type: ignore[attr-defined]
    clock.now += 61
    assert app.sessions.reap() == 2 and len(app.sessions) == 0
    app.legacy.close()


async def test_reaping_cancels_what_the_session_was_doing() -> None:
    clock = Clock()
    app = make_app(clock)
    server = app.server

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Waits for the user forever."""
        answer = await ctx.elicit("?", {"type": "object", "properties": {}})
        return answer.action

    client = SessionClient(app)
    await client.initialize({"elicitation": {}})
    conn = await client.open(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask"}}
    )
    assert (await conn.next_message())["method"] == "elicitation/create"
    conn.disconnect.set()  # type: ignore[attr-defined]
    await asyncio.wait_for(conn.task, scaled(5))  # type: ignore[attr-defined]
    core = app.sessions.get(client.session_id).core
    (task,) = core.tasks.values()
    clock.now += 61
    assert app.sessions.reap() == 1
    await asyncio.wait([task], timeout=scaled(5))
    assert task.done() and not core.tasks and not core._pending  # ended, nothing left
    app.legacy.close()


async def test_sticky_routing_unknown_session_is_a_prompt_404() -> None:
    """Two instances share nothing about sessions: B answers A's session id with 404 at once
    (POST, GET and DELETE), and the client recovers by initializing on B."""
    clock = Clock()
    a, b = make_app(clock), make_app(clock)
    client = SessionClient(a)
    await client.initialize()
    on_b = SessionClient(b)
    on_b.session_id = client.session_id
    for verb, message in (
        ("POST", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ("GET", None),
        ("DELETE", None),
    ):
        conn = await asyncio.wait_for(on_b.open(message, http_method=verb), scaled(1))
        await asyncio.wait_for(conn.task, scaled(1))  # type: ignore[attr-defined]
        assert conn.status == 404, verb
        assert conn.json["error"]["code"] == -32600
    on_b.session_id = None
    await on_b.initialize()  # what a 2025-11-25 client does after a 404
    assert (await on_b.request("tools/list"))["result"]["tools"][0]["name"] == "hello"
    a.legacy.close()
    b.legacy.close()


async def test_readme_session_options_and_modern_only_refusal() -> None:
    server = Server("options")
    app = server.http_app(idle_timeout=300, max_sessions=2_000, session_id_prefix="a.")
    client = SessionClient(app)
    await client.initialize()
    assert client.session_id is not None and client.session_id.startswith("a.")
    assert app.sessions.idle_timeout == 300 and app.sessions.max_sessions == 2_000
    app.legacy.close()
    try:
        Server("modern", legacy=False).http_app(idle_timeout=5)
    except TypeError as exc:
        assert "dual-era" in str(exc)
    else:
        raise AssertionError("session options on a modern-only server must be refused")


async def test_a_session_refuses_requests_past_its_in_flight_cap_and_takes_them_after() -> None:
    """The cap is the session core's (`LegacySession.max_in_flight`, 128 over HTTP): the
    request past it is answered 503 with its id, nothing of it started; once the requests in
    flight end, the session takes new ones."""
    app = make_app(Clock())
    release = asyncio.Event()

    @app.server.tool()
    async def hold(ctx: Context) -> str:
        """Says it started, then waits for the test."""
        await ctx.info("started")
        await release.wait()
        return "held"

    client = SessionClient(app)
    await client.initialize()
    cap = app.sessions.get(client.session_id).core.max_in_flight
    assert cap == 128
    held = []
    with not_recorded():
        for i in range(cap):
            conn = await client.open(
                {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "hold"}}
            )
            assert (await conn.next_message())["method"] == "notifications/message"
            held.append(conn)
    refused = await client.call(
        {"jsonrpc": "2.0", "id": "over", "method": "tools/call", "params": {"name": "hold"}}
    )
    assert refused.status == 503 and refused.json["id"] == "over"
    assert "in flight" in refused.json["error"]["message"]
    release.set()
    for conn in held:
        assert (await conn.next_message())["result"]["content"][0]["text"] == "held"
    assert (await client.request("tools/call", {"name": "hold"}, id="after"))["result"]
    app.legacy.close()
