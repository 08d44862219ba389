"""Middleware (an ordered chain around Server.handle), the shipped ones, and lifespan."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from legacy_support import session
from mcpkit import Context, Server
from mcpkit.protocol.jsonrpc import Request
from mcpkit.server import Call, CallNext, RateLimit, ResponseSizeLimit, TimingLog
from mcpkit.server.auth.access import AccessToken, current_access
from support import ask, text_of


def shop(**options: Any) -> Server:
    server = Server("shop", **options)

    @server.tool()
    async def echo(text: str) -> str:
        """Echo the text back."""
        return text

    return server


async def test_middleware_run_in_order_around_the_handler() -> None:
    seen: list[str] = []

    def named(label: str) -> Any:
        async def mw(call: Call, call_next: CallNext) -> Any:
            seen.append(f"{label} in {call.method} {call.name}")
            result = await call_next(call)
            seen.append(f"{label} out")
            return result

        return mw

    server = shop(middleware=[named("outer"), named("inner")])
    result = await ask(server, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    assert text_of(result) == "hi"
    assert seen == [
        "outer in tools/call echo",
        "inner in tools/call echo",
        "inner out",
        "outer out",
    ]


async def test_a_middleware_can_short_circuit_and_rewrite() -> None:
    reached: list[str] = []

    async def guard(call: Call, call_next: CallNext) -> Any:
        if call.name == "echo" and call.params.get("arguments", {}).get("text") == "stop":
            return {"resultType": "complete", "content": [{"type": "text", "text": "blocked"}]}
        return await call_next(call)

    async def shout(call: Call, call_next: CallNext) -> Any:
        reached.append(call.method)
        if call.method == "tools/call":
            params = dict(call.params)
            params["arguments"] = {"text": params["arguments"]["text"].upper()}
            call.request = Request(call.request.id, call.method, params)
        return await call_next(call)

    server = shop(middleware=[guard, shout])
    blocked = await ask(server, "tools/call", {"name": "echo", "arguments": {"text": "stop"}})
    assert text_of(blocked) == "blocked" and reached == []  # the inner chain never ran
    loud = await ask(server, "tools/call", {"name": "echo", "arguments": {"text": "go"}})
    assert text_of(loud) == "GO" and reached == ["tools/call"]


async def test_middleware_see_protocol_errors_and_every_method() -> None:
    outcomes: list[tuple[str, str]] = []

    async def watch(call: Call, call_next: CallNext) -> Any:
        try:
            result = await call_next(call)
        except Exception as exc:
            outcomes.append((call.method, type(exc).__name__))
            raise
        outcomes.append((call.method, "ok"))
        return result

    server = shop()
    server.add_middleware(watch)
    error = await ask(server, "tools/call", {"name": "nope"})
    assert error["code"] == -32602
    await ask(server, "tools/list")
    await ask(server, "no/such")
    assert outcomes == [
        ("tools/call", "InvalidParams"),
        ("tools/list", "ok"),
        ("no/such", "MethodNotFound"),
    ]


async def test_middleware_run_for_2025_sessions_too() -> None:
    seen: list[str] = []

    async def mw(call: Call, call_next: CallNext) -> Any:
        seen.append(call.method)
        return await call_next(call)

    server = shop(middleware=[mw])
    async with session(server.http_app()) as client:
        reply = await client.request("tools/call", {"name": "echo", "arguments": {"text": "old"}})
    assert reply["result"]["content"][0]["text"] == "old"
    assert seen == ["tools/call"]


async def test_timing_log_records_each_request(caplog: pytest.LogCaptureFixture) -> None:
    ticks = iter([10.0, 10.0042, 20.0, 20.5])
    server = shop(middleware=[TimingLog(clock=lambda: next(ticks), slow_ms=100)])
    with caplog.at_level(logging.INFO, logger="mcpkit.server.requests"):
        await ask(server, "tools/call", {"name": "echo", "arguments": {"text": "x"}})
        await ask(server, "tools/call", {"name": "nope"})
    first, second = (r for r in caplog.records if r.name == "mcpkit.server.requests")
    assert first.getMessage() == "tools/call echo ok 4.2 ms" and first.levelno == logging.INFO
    assert second.getMessage() == "tools/call nope error -32602 500.0 ms"
    assert second.levelno == logging.WARNING  # slower than slow_ms


async def test_rate_limit_per_principal() -> None:
    now = [0.0]
    limit = RateLimit(per_second=1, burst=2, clock=lambda: now[0])
    server = shop(middleware=[limit])
    args = {"name": "echo", "arguments": {"text": "x"}}

    async def as_(who: str) -> Any:
        reset = current_access.set(AccessToken(subject=who))
        try:
            return await ask(server, "tools/call", args)
        finally:
            current_access.reset(reset)

    assert not (await as_("ann")).get("isError")
    assert not (await as_("ann")).get("isError")
    refused = await as_("ann")  # burst spent: a tool error the model can act on
    assert refused["isError"] is True and "try again in 1 s" in text_of(refused)
    assert not (await as_("bob")).get("isError")  # another caller has a bucket of their own
    error = await ask(server, "tools/list")  # unauthenticated requests share one bucket
    assert "tools" in error
    await ask(server, "tools/list")
    refused_list = await ask(server, "tools/list")
    assert refused_list["code"] == -31029 and refused_list["data"] == {"retryAfterSeconds": 1}
    now[0] = 1.0  # one token back
    assert not (await as_("ann")).get("isError")


async def test_rate_limit_forgets_the_least_recent_callers() -> None:
    limit = RateLimit(per_second=1, burst=1, max_callers=2, clock=lambda: 0.0)
    assert limit.take("a") == 0.0 and limit.take("b") == 0.0 and limit.take("c") == 0.0
    assert limit.take("a") == 0.0  # "a" was evicted: a fresh bucket
    assert limit.take("c") == 1.0


async def test_response_size_limit() -> None:
    server = shop(middleware=[ResponseSizeLimit(max_bytes=300)])
    ok = await ask(server, "tools/call", {"name": "echo", "arguments": {"text": "small"}})
    assert text_of(ok) == "small"
    big = await ask(server, "tools/call", {"name": "echo", "arguments": {"text": "x" * 400}})
    assert big["isError"] is True and "over this server's limit of 300" in text_of(big)
    assert "x" * 400 not in text_of(big)
    tight = shop(middleware=[ResponseSizeLimit(max_bytes=10)])
    error = await ask(tight, "tools/list")  # a pre-encoded list is measured too
    assert error["code"] == -32603 and "limit of 10" in error["message"]


async def test_lifespan_state_reaches_tools_and_middleware() -> None:
    events: list[str] = []

    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, str]]:
        events.append("start")
        yield {"db": "connected"}
        events.append("stop")

    async def mw(call: Call, call_next: CallNext) -> Any:
        events.append(f"mw sees {call.lifespan['db']}")
        return await call_next(call)

    server = Server("app", lifespan=lifespan, middleware=[mw])

    @server.tool()
    async def status(ctx: Context) -> str:
        """Say whether the database is connected."""
        return str(ctx.lifespan["db"])

    assert server.lifespan_state is None
    await server.startup()
    await server.startup()  # entered once
    result = await ask(server, "tools/call", {"name": "status"})
    assert text_of(result) == "connected"
    await server.shutdown()
    assert events == ["start", "mw sees connected", "stop"]
    assert server.lifespan_state is None
