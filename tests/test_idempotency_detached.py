"""At most once, end to end: a keyed call whose connection is cut while the tool runs goes on to
its outcome, and the re-send gets that outcome instead of a second run (CANC-11, TR-HTTP-22..24).
A call whose instance dies leaves "outcome unknown" once its lease lapses, never a free key.

Real server processes (tests/servers/idempotent_server.py) behind a TCP proxy that drops the
connection; `slow_bump` appends a line to a file per run, so its effect is counted from outside."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest

from host_support import (
    FakeAPI,
    RecordingUI,
    api_path,
    example_config,
    host_for,
    script,
    tool_results,
)
from mcpkit.client import Client, ConnectionClosed, TransportError
from mcpkit.protocol.errors import MCPError
from mcpkit.protocol.idempotency import IDEMPOTENCY_KEY, IDEMPOTENT_REPLAY
from processes import REDIS, http_process, http_server, redis_process, stop
from support import ROOT, free_port, rpc, scaled, wait_port
from tcp_proxy import TcpProxy

pytestmark = pytest.mark.timing

SERVER = ROOT / "tests/servers/idempotent_server.py"
ALICE = {"Authorization": "Bearer alice"}
OUTCOME_UNKNOWN = -31100


@pytest.fixture
def effects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the servers started by the test record each run of `slow_bump`."""
    path = tmp_path / "effects.txt"
    path.touch()
    monkeypatch.setenv("MCPKIT_TEST_EFFECTS", str(path))
    return path


def runs_of(effects: Path) -> list[str]:
    return effects.read_text().splitlines()


async def effect_seen(effects: Path) -> None:
    """Wait until the tool has run (its effect is on file): the call is now midway."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + scaled(30)
    for _ in iter(int, 1):
        if runs_of(effects):
            return
        assert loop.time() < deadline, "the tool did not start"
        await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def proxied(url: str) -> AsyncIterator[TcpProxy]:
    async with TcpProxy(upstream=("127.0.0.1", int(url.rsplit(":", 1)[1]))) as proxy:
        yield proxy


async def cut_midway(url: str, effects: Path, era: str, key: str) -> object:
    """Call `slow_bump` with `key` through a proxy, drop the connection once the tool ran, and
    return what the caller finally got (its client re-sends with the same key, TR-HTTP-22)."""
    async with (
        proxied(url) as proxy,
        Client(proxy.url + "/mcp", headers=ALICE, era=era) as client,
    ):
        call = asyncio.create_task(
            client.call_tool("slow_bump", {"seconds": scaled(1.5)}, idempotency_key=key)
        )
        await effect_seen(effects)
        assert proxy.drop() >= 1  # the network path breaks while the tool runs
        try:
            return await call
        except ConnectionClosed:  # a 2025-11-25 client does not re-send: the caller will
            assert era == "legacy"
            return None


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_keyed_call_cut_midway_runs_once_over_http(era: str, effects: Path) -> None:
    """On 2026-07-28 the disconnect cancels the request (TR-HTTP-23), not the keyed call; the
    re-send waits for it and replays its result (2025-11-25: the same promise)."""
    async with http_server(SERVER) as url:
        result = await cut_midway(url, effects, era, "pay-1")
        async with Client(url + "/mcp", headers=ALICE, era=era) as client:
            again = await client.call_tool(
                "slow_bump", {"seconds": scaled(1.5)}, idempotency_key="pay-1"
            )
    assert again.text == "1" and again.replayed
    assert era == "legacy" or getattr(result, "text", None) == "1"  # the client's own re-send
    assert runs_of(effects) == ["alice 1"]  # charged once


@pytest.mark.skipif(REDIS is None, reason="redis-server is not installed")
async def test_a_keyed_call_cut_midway_runs_once_with_the_redis_store(effects: Path) -> None:
    """Two instances share Redis: the re-send lands on the other one and waits for the
    first's outcome there."""
    async with (
        redis_process() as redis,
        http_server(SERVER, redis.url) as a,
        http_server(SERVER, redis.url) as b,
    ):
        await cut_midway(a, effects, "modern", "pay-2")
        async with Client(b + "/mcp", headers=ALICE) as client:
            again = await client.call_tool(
                "slow_bump", {"seconds": scaled(1.5)}, idempotency_key="pay-2"
            )
    assert again.text == "1" and again.replayed
    assert runs_of(effects) == ["alice 1"]


@pytest.mark.skipif(REDIS is None, reason="redis-server is not installed")
async def test_a_call_whose_instance_was_killed_is_outcome_unknown_elsewhere(
    effects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL midway: nobody renews the call's lease; once it lapses, the other instance
    answers the re-send with "outcome unknown" naming the key, and does not run the tool."""
    monkeypatch.setenv("MCPKIT_TEST_LEASE", str(scaled(1)))
    arguments = {"seconds": 600}
    async with (
        redis_process() as redis,
        http_process(SERVER, redis.url) as (a, proc),
        http_server(SERVER, redis.url) as b,
    ):
        async with Client(a + "/mcp", headers=ALICE) as client:
            call = asyncio.create_task(
                client.call_tool("slow_bump", arguments, idempotency_key="pay-3")
            )
            await effect_seen(effects)
            await stop(proc, signal.SIGKILL)
            with pytest.raises(TransportError):  # broken, and the re-send refused
                await call
        async with Client(b + "/mcp", headers=ALICE) as client:
            with pytest.raises(MCPError, match="Outcome unknown") as raised:
                await client.call_tool("slow_bump", arguments, idempotency_key="pay-3")
            with pytest.raises(MCPError, match="Outcome unknown"):  # and it stays so
                await client.call_tool("slow_bump", arguments, idempotency_key="pay-3")
    assert raised.value.code == OUTCOME_UNKNOWN
    assert "'pay-3'" in raised.value.message and raised.value.data == {"idempotencyKey": "pay-3"}
    assert runs_of(effects) == ["alice 1"]


async def stdio_server(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(SERVER),
        "stdio",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )


def keyed_call(seconds: float, key: str) -> bytes:
    params = {"name": "slow_bump", "arguments": {"seconds": seconds}}
    return orjson.dumps(rpc("tools/call", params, **{IDEMPOTENCY_KEY: key})) + b"\n"


@pytest.mark.skipif(REDIS is None, reason="redis-server is not installed")
async def test_a_keyed_call_cut_midway_runs_once_over_stdio(effects: Path) -> None:
    """The client goes away (stdin closes) while the tool runs, past the 5 s in-flight
    requests get at EOF: the keyed call still runs to its outcome, which the next server
    process (the client started again) replays from the shared store."""
    seconds = 5 + scaled(1)
    async with redis_process() as redis:
        first = await stdio_server(redis.url)
        assert first.stdin is not None
        first.stdin.write(keyed_call(seconds, "pay-4"))
        await effect_seen(effects)
        first.stdin.close()  # the connection is cut: EOF, no answer read
        assert await asyncio.wait_for(first.wait(), scaled(60)) == 0
        second = await stdio_server(redis.url)
        out, _ = await asyncio.wait_for(
            second.communicate(keyed_call(seconds, "pay-4")), scaled(60)
        )
    answer = orjson.loads(out.splitlines()[0])
    assert answer["result"]["_meta"][IDEMPOTENT_REPLAY] is True
    assert runs_of(effects) == ["None 1"]  # stdio: no principal


async def heads_seen(proxy: TcpProxy, marker: bytes, count: int) -> None:
    """Wait until `count` requests carrying `marker` went through the proxy."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + scaled(30)
    for _ in iter(int, 1):
        if sum(marker in head.lower() for head in proxy.heads) >= count:
            return
        assert loop.time() < deadline, "the request did not arrive"
        await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def gateway_before(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    """`mcpkit gateway` (a real process) in front of `backend`: its URL; alice's token is
    `tok-alice`, the gateway calls the backend as "gw"."""
    config = tmp_path / "gateway.json"
    entry = {
        "type": "http",
        "url": backend + "/mcp",
        "headers": {"Authorization": "Bearer gw"},
        "trusted": True,
        "consent": {"allow": ["*"]},
    }
    gateway = {"auth": {"tokens": [{"token": "tok-alice", "sub": "alice"}]}}
    config.write_bytes(orjson.dumps({"gateway": gateway, "mcpServers": {"pay": entry}}))
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpkit", "gateway", "--config", str(config), "--port", str(port),
        cwd=ROOT, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        await wait_port(port, proc, scaled(60))
        yield f"http://127.0.0.1:{port}"
    finally:
        await stop(proc)


async def test_a_keyed_call_cut_midway_runs_once_through_the_gateway(
    effects: Path, tmp_path: Path
) -> None:
    """The gateway's own guard holds the front key while it forwards (with a key derived from
    it): the caller's re-send waits there and gets the forwarded call's result."""
    alice = {"Authorization": "Bearer tok-alice"}
    async with (
        http_server(SERVER) as backend,
        gateway_before(backend, tmp_path) as gateway,
        proxied(gateway) as proxy,
        Client(proxy.url + "/mcp", headers=alice) as client,
    ):
        call = asyncio.create_task(
            client.call_tool("pay__slow_bump", {"seconds": scaled(1.5)}, idempotency_key="pay-5")
        )
        await effect_seen(effects)
        assert proxy.drop() >= 1
        result = await call  # the client's re-send, answered from the gateway's record
    assert result.text == "1" and result.replayed
    assert runs_of(effects) == ["gw 1"]


async def test_a_keyed_call_cut_midway_runs_once_through_the_host(
    effects: Path, tmp_path: Path
) -> None:
    """The model asks once; the connection drops while the tool runs, and again under the
    client's own re-send: the host's retry (same key, `host/retry.py`) gets the first run's
    result, and the tool ran once."""
    marker = b"mcp-name: slow_bump"
    async with http_server(SERVER) as url, proxied(url) as proxy:
        call = ("pay__slow_bump", {"seconds": scaled(1.5)})
        entry = {
            "type": "http",
            "url": proxy.url + "/mcp",
            "headers": {"Authorization": "Bearer alice"},
            "trusted": True,
            "consent": {"allow": ["*"]},
        }

        async def cut_twice() -> None:
            await effect_seen(effects)
            proxy.drop()  # midway
            await heads_seen(proxy, marker, 2)
            proxy.drop()  # under the client's re-send: the host's retry is next

        async with FakeAPI(api_path("anthropic"), script("anthropic", [call], "Done.")) as api:
            cfg = example_config({"PYTHON": sys.executable}, pay=entry)
            ui = RecordingUI()
            async with host_for(cfg, api, ui, tmp_path, servers=["pay"]) as host:
                cutter = asyncio.create_task(cut_twice())
                await host.agent().ask("Please pay.")
                await cutter
        assert sum(marker in head.lower() for head in proxy.heads) >= 3
    ((text, is_error),) = tool_results("anthropic", api.requests[1])
    assert not is_error and text.strip() == "1"
    assert runs_of(effects) == ["alice 1"]


@pytest.mark.skipif(REDIS is None, reason="redis-server is not installed")
async def test_a_call_stopped_by_a_drain_is_outcome_unknown_elsewhere(
    effects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM: the instance drains, the keyed call outlasts the drain and is stopped; its key
    says "outcome unknown" at once (no lease to wait for), and no instance runs it again."""
    monkeypatch.setenv("MCPKIT_DRAIN_TIMEOUT", "0.5")
    arguments = {"seconds": 600}
    async with (
        redis_process() as redis,
        http_process(SERVER, redis.url) as (a, proc),
        http_server(SERVER, redis.url) as b,
    ):
        async with Client(a + "/mcp", headers=ALICE) as client:
            call = asyncio.create_task(
                client.call_tool("slow_bump", arguments, idempotency_key="pay-6")
            )
            await effect_seen(effects)
            code = await stop(proc, signal.SIGTERM, scaled(30))
            assert code in (0, -signal.SIGTERM)  # drained, then re-raised: not killed
            with pytest.raises(MCPError, match=r"Outcome unknown.*'pay-6'"):
                await call  # a JSON-RPC error naming the key, never a 500 or a cut connection
        async with Client(b + "/mcp", headers=ALICE) as client:
            with pytest.raises(MCPError, match=r"Outcome unknown.*'pay-6'"):
                await client.call_tool("slow_bump", arguments, idempotency_key="pay-6")
    assert runs_of(effects) == ["alice 1"]


async def test_an_explicit_cancel_over_stdio_leaves_the_outcome_unknown(effects: Path) -> None:
    """`notifications/cancelled` on stdio stops the keyed call midway (CANC-11 does not apply:
    the client asked); the same key then answers "outcome unknown", the tool is not run again."""
    proc = await stdio_server()
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(keyed_call(600, "pay-7"))
    await effect_seen(effects)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    proc.stdin.write(orjson.dumps(cancel) + b"\n")
    again = rpc("tools/call", {"name": "slow_bump", "arguments": {"seconds": 600}}, id=2)
    again["params"]["_meta"][IDEMPOTENCY_KEY] = "pay-7"
    out, _ = await asyncio.wait_for(proc.communicate(orjson.dumps(again) + b"\n"), scaled(60))
    (answer,) = [orjson.loads(line) for line in out.splitlines()]  # none for the cancelled one
    assert answer["id"] == 2 and answer["error"]["code"] == OUTCOME_UNKNOWN
    assert answer["error"]["data"] == {"idempotencyKey": "pay-7"}
    assert runs_of(effects) == ["None 1"]
