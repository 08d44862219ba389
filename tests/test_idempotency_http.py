"""Idempotency keys end to end: a real server process behind a proxy that breaks the response
after the tool ran. The client re-sends (TR-HTTP-22) with the same key and the tool runs once."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mcpkit.client import Client, ConnectionClosed
from processes import REDIS, http_server, redis_process
from support import ROOT
from tcp_proxy import TcpProxy

SERVER = ROOT / "tests/servers/idempotent_server.py"
BUMP = b"mcp-name: bump"


def as_user(url: str, name: str) -> Client:
    return Client(url + "/mcp", headers={"Authorization": f"Bearer {name}"}, era="modern")


async def runs(url: str, name: str) -> int:
    async with as_user(url, name) as client:
        return int((await client.call_tool("runs")).text)


@pytest.fixture
async def server() -> AsyncIterator[str]:
    async with http_server(SERVER) as url:
        yield url


@pytest.fixture
async def proxy(server: str) -> AsyncIterator[TcpProxy]:
    port = int(server.rsplit(":", 1)[1])
    async with TcpProxy(upstream=("127.0.0.1", port)) as proxy:
        yield proxy


@pytest.mark.parametrize("after_head", [True, False], ids=["stream-broken", "closed-unanswered"])
async def test_a_broken_response_is_resent_with_the_key_and_the_tool_runs_once(
    server: str, proxy: TcpProxy, after_head: bool
) -> None:
    async with as_user(proxy.url, "alice") as client:
        assert client.supports_idempotency
        proxy.cut_next(BUMP, after_head=after_head)
        result = await client.call_tool("bump", idempotency_key=True)
    assert proxy.cuts == 1
    assert sum(BUMP in h.lower() for h in proxy.heads) == 2  # sent twice
    assert result.text == "1" and result.replayed  # the first run's result
    assert await runs(server, "alice") == 1  # the counter: the tool ran once


async def test_without_a_key_a_broken_stream_runs_the_tool_twice(
    server: str, proxy: TcpProxy
) -> None:
    """What the key prevents: TR-HTTP-22 re-sends a request whose stream broke."""
    async with as_user(proxy.url, "alice") as client:
        proxy.cut_next(BUMP, after_head=True)
        result = await client.call_tool("bump")
    assert result.text == "2" and not result.replayed
    assert await runs(server, "alice") == 2


async def test_without_a_key_an_unanswered_call_is_not_resent(server: str, proxy: TcpProxy) -> None:
    """Closed before any answer: it may have run, so only a keyed request goes again."""
    async with as_user(proxy.url, "alice") as client:
        proxy.cut_next(BUMP)
        with pytest.raises(ConnectionClosed, match="closed before any answer"):
            await client.call_tool("bump")
    assert await runs(server, "alice") == 1


async def test_a_server_without_the_extension_gets_no_second_delivery() -> None:
    """A key it does not know protects nothing: closed before any answer, the call is not
    sent again (its outcome is the caller's to judge), whatever the key says."""
    async with http_server(SERVER, "plain") as url:
        port = int(url.rsplit(":", 1)[1])
        async with TcpProxy(upstream=("127.0.0.1", port)) as proxy:
            async with as_user(proxy.url, "alice") as client:
                assert not client.supports_idempotency
                proxy.cut_next(BUMP)
                with pytest.raises(ConnectionClosed, match="closed before any answer"):
                    await client.call_tool("bump", idempotency_key=True)
            assert sum(BUMP in h.lower() for h in proxy.heads) == 1
        assert await runs(url, "alice") == 1


async def test_keys_belong_to_the_caller(server: str) -> None:
    """The principal comes from the verified token, never from the request."""
    for name in ("alice", "bob", "alice"):
        async with as_user(server, name) as client:
            await client.call_tool("bump", {"amount": 10}, idempotency_key="same-key")
    assert await runs(server, "alice") == 10
    assert await runs(server, "bob") == 10


@pytest.mark.skipif(REDIS is None, reason="redis-server is not installed")
async def test_instances_sharing_redis_replay_each_others_results() -> None:
    async with redis_process() as redis:
        url = redis.url
        async with http_server(SERVER, url) as a, http_server(SERVER, url) as b:
            async with as_user(a, "alice") as client:
                first = await client.call_tool("bump", idempotency_key="k1")
            async with as_user(b, "alice") as client:
                again = await client.call_tool("bump", idempotency_key="k1")
            assert first.text == again.text == "1" and again.replayed
            assert await runs(a, "alice") == 1 and await runs(b, "alice") == 0


async def test_a_legacy_session_honours_keys_too(server: str) -> None:
    """2025-11-25 sessions run tools/call through the same handler; the extension is not
    advertised there (extensions are the modern wire's), but a key that arrives is honoured."""
    headers = {"Authorization": "Bearer carol"}
    async with Client(server + "/mcp", era="legacy", headers=headers) as client:
        assert client.era == "legacy" and not client.supports_idempotency
        first = await client.call_tool("bump", idempotency_key="k")
        again = await client.call_tool("bump", idempotency_key="k")
    assert first.text == again.text == "1" and again.replayed
