"""The spec's cache through the gateway (issue 30, item 2): lazy backends listed from the
record of their last start, started on the first call and stopped when idle; backends listed
per caller (`"listPerUser"`), whose private records (CACHE-11) reach only their own caller
across a restart, after the front's access control (CACHE-19), while a public one is shared.
Real processes throughout: the backends write a marker as they start (lazy_server.py) or a
line per list they answer (per_caller_server.py), and the front is served over HTTP."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from gateway_support import serving
from host_support import SERVERS, start_http, stop
from mcpkit.client import Client
from mcpkit.client.errors import TransportError
from mcpkit.gateway import Gateway, front_auth
from mcpkit.host import parse_config
from mcpkit.host.supervision import LinkState
from mcpkit.protocol.errors import MCPError
from support import free_port, scaled

LAZY = str(SERVERS / "lazy_server.py")
PER_CALLER = str(SERVERS / "per_caller_server.py")
TOKENS = {"alice": "front-alice", "bob": "front-bob"}
ALLOW = {"trusted": True, "consent": {"allow": ["*"]}}


def starts(folder: Path) -> int:
    """How many times backend `a` started (lazy_server.py writes `a-<pid>` each time)."""
    return sum(p.name.startswith("a-") for p in folder.iterdir())


def lists(folder: Path) -> list[str]:
    """Whose `tools/list` the per-caller backend answered, in order."""
    path = folder / "lists"
    return path.read_text().split() if path.exists() else []


def gateway(tmp_path: Path, servers: dict[str, Any]) -> Gateway:
    auth = {"tokens": [{"token": t, "sub": s} for s, t in TOKENS.items()]}
    host = {"records": str(tmp_path / "records"), "startupTimeout": scaled(30)}
    raw = {"gateway": {"auth": auth}, "mcpServers": servers, "host": host}
    return Gateway(parse_config(raw, env={}))


@asynccontextmanager
async def front(tmp_path: Path, servers: dict[str, Any]) -> AsyncIterator[tuple[Gateway, str]]:
    """A gateway over `servers`, served over HTTP behind its token auth."""
    made = gateway(tmp_path, servers)
    async with serving(made, auth=front_auth(made.settings, "http://x/mcp")) as url:
        yield made, url


def as_user(url: str, who: str) -> Client:
    return Client(url, headers={"Authorization": f"Bearer {TOKENS[who]}"})


async def names(url: str, who: str) -> set[str]:
    async with as_user(url, who) as client:
        return {tool.name for tool in await client.list_tools()}


async def call(url: str, who: str, tool: str, **arguments: Any) -> tuple[str, bool]:
    async with as_user(url, who) as client:
        result = await client.call_tool(tool, arguments)
        return result.text, result.is_error


async def test_a_lazy_backend_is_listed_from_its_record_started_on_first_call_stopped_when_idle(
    tmp_path: Path,
) -> None:
    entry = {"command": sys.executable, "args": [LAZY, str(tmp_path), "a"], **ALLOW}
    servers = {"a": {**entry, "start": "lazy", "idleTimeout": 1}}
    async with front(tmp_path, servers) as (made, url):
        assert await names(url, "alice") == {"a__ping"}  # no record yet: started to make one
    assert starts(tmp_path) == 1
    async with front(tmp_path, servers) as (made, url):
        link = made.links["a"]
        async with asyncio.timeout(scaled(30)):
            await link.settled()  # the gateway's start-up has run
        assert link.idle and link.client is None
        assert await names(url, "alice") == {"a__ping"}  # from the record: nothing started
        async with as_user(url, "alice") as client:
            resources = await client.list_resources()
            assert [r.uri for r in resources] == ["a+lazy://note"]
        assert starts(tmp_path) == 1
        assert await call(url, "alice", "a__ping", text="x") == ("pong x", False)
        assert starts(tmp_path) == 2  # the first call started it
        assert link.up
        async with asyncio.timeout(scaled(30)):
            await link.until(LinkState.IDLE)  # stopped after idleTimeout without a call
        assert link.client is None
        assert await names(url, "bob") == {"a__ping"}  # still offered while stopped
        assert await call(url, "bob", "a__ping", text="y") == ("pong y", False)
        assert starts(tmp_path) == 3  # the next call started it again


async def test_a_stale_record_is_listed_with_ttl_0_and_renewed_at_the_next_start(
    tmp_path: Path,
) -> None:
    entry = {"command": sys.executable, "args": [LAZY, str(tmp_path), "a"], **ALLOW}
    servers = {"a": {**entry, "start": "lazy"}}
    async with front(tmp_path, servers) as (made, url):
        assert await names(url, "alice") == {"a__ping"}  # started once to make the record
    (record,) = (tmp_path / "records").iterdir()
    made = gateway(tmp_path, servers)
    assert made.records is not None
    made.records.clock = lambda: time.time() + 3600  # an hour on: past the record's ttlMs
    async with serving(made, auth=front_auth(made.settings, "http://x/mcp")) as url:
        async with as_user(url, "alice") as client:
            listed = await client.request("tools/list", use_cache=False)
        assert [t["name"] for t in listed["tools"]] == ["a__ping"]
        assert listed["ttlMs"] == 0  # offered, as a stale catalogue (CACHE-07)
        assert starts(tmp_path) == 1
        before = json.loads(record.read_text())["saved"]
        assert await call(url, "alice", "a__ping") == ("pong", False)
        assert json.loads(record.read_text())["saved"] > before  # renewed at the start
    assert starts(tmp_path) == 2


@pytest.fixture
async def backend(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[str]:
    """The per-caller backend over HTTP (`public` when the test is parametrized so): its URL."""
    port = free_port()
    argv = [PER_CALLER, str(tmp_path), *getattr(request, "param", [])]
    proc = await start_http(argv, port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        await stop(proc)


def per_caller(url: str) -> dict[str, Any]:
    return {
        "notes": {
            "url": url,
            "headers": {"Authorization": "Bearer tok-gateway"},  # the gateway's own listing
            "userHeaders": {"Authorization": "Bearer tok-{sub}"},
            "listPerUser": True,
            **ALLOW,
        }
    }


async def test_a_private_list_reaches_only_its_own_caller_across_a_restart(
    tmp_path: Path, backend: str
) -> None:
    servers = per_caller(backend)
    async with front(tmp_path, servers) as (_, url):
        assert await names(url, "alice") == {"notes__alice_notes"}
        assert await call(url, "alice", "notes__alice_notes") == (
            "alice's notes, read by alice",
            False,
        )
    assert lists(tmp_path) == ["gateway", "alice"]  # the gateway's own listing, then alice's
    async with front(tmp_path, servers) as (_, url):
        # Access control comes first: a caller without a token gets 401, and nothing is listed.
        with pytest.raises(TransportError) as refused:
            async with Client(url) as anonymous:
                await anonymous.list_tools()
        assert refused.value.status == 401
        # Bob comes first after the restart: alice's record is hers, so he is listed afresh.
        assert await names(url, "bob") == {"notes__bob_notes"}
        with pytest.raises(MCPError, match="Unknown tool: notes__alice_notes"):
            await call(url, "bob", "notes__alice_notes")
        # Alice gets hers from her record, without a list at the backend; the answer is hers.
        async with as_user(url, "alice") as alice:
            listed = await alice.request("tools/list", use_cache=False)
        assert [t["name"] for t in listed["tools"]] == ["notes__alice_notes"]
        assert listed["cacheScope"] == "private"
        assert await call(url, "alice", "notes__alice_notes") == (
            "alice's notes, read by alice",
            False,
        )
    assert lists(tmp_path) == ["gateway", "alice", "gateway", "bob"]
    records = sorted(p.name for p in (tmp_path / "records").iterdir())
    assert len(records) == 2  # one private record per caller, none shared
    for path in (tmp_path / "records").iterdir():
        assert ("alice_notes" in path.read_text()) != ("bob_notes" in path.read_text())


@pytest.mark.parametrize("backend", [["public"]], indirect=True)
async def test_a_public_list_is_recorded_once_and_shared(tmp_path: Path, backend: str) -> None:
    servers = per_caller(backend)
    async with front(tmp_path, servers) as (_, url):
        assert await names(url, "alice") == {"notes__notes"}
    async with front(tmp_path, servers) as (_, url):
        assert await names(url, "bob") == {"notes__notes"}  # alice's public record
        assert await call(url, "bob", "notes__notes") == ("shared notes, read by bob", False)
    assert lists(tmp_path) == ["gateway", "alice", "gateway"]  # bob was never listed
