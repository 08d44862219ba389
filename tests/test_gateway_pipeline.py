"""The gateway's calls go through the host's call pipeline (`for_gateway`): a consent denial, a
refused host-owned argument, a tool withheld since its definition changed, audit records and
the deadline policy (over a backend task too, and not counting the user's time), as an MCP
client of the gateway sees them (real backend processes, or a backend served over HTTP)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway_support import accept, serving, settled
from mcpkit.client import Client
from mcpkit.client.inputs import Elicitation
from mcpkit.gateway import Gateway
from mcpkit.host import HostSettings, ToolPins, parse_config
from mcpkit.host.audit import read_audit
from support import ROOT, scaled

sys.path.insert(0, str(ROOT / "tests/servers"))
from proxy_backend import build

SERVER = str(ROOT / "tests/servers/pipeline_server.py")
TASKS = str(ROOT / "tests/servers/task_hang_server.py")


def gateway(name: str, entry: dict[str, Any], **host: Any) -> Gateway:
    entry = {"trusted": True, "consent": {"allow": ["*"]}, **entry}
    return Gateway(parse_config({"mcpServers": {name: entry}}, env={}), host=HostSettings(**host))


async def test_gateway_runs_its_policies(tmp_path: Path) -> None:
    pins = tmp_path / "pins.json"
    # `order` was pinned with another definition: it is withheld until approved.
    ToolPins(pins).pin("shop", [{"name": "order", "description": "Order an item (old)."}])
    entry = {
        "command": sys.executable,
        "args": [SERVER],
        "hostOwned": {"customer_id": "C-7"},
        "timeouts": {"stall": 0.3},  # `stall` never answers: this always runs out
        "consent": {"allow": ["*"], "deny": ["wipe"]},
        "trustNewTools": True,  # the other tools are offered on sight; `order` changed: it waits
    }
    cfg = parse_config({"mcpServers": {"shop": entry}}, env={})
    audit = tmp_path / "audit.jsonl"
    gateway = Gateway(cfg, host=HostSettings(audit=audit, pins=pins))
    async with serving(gateway) as front, Client(front) as client:
        tools = {t.name for t in await client.list_tools()}
        assert tools == {"shop__crawl", "shop__stall", "shop__wipe"}  # `order` withheld
        wiped = await client.call_tool("shop__wipe", {})
        assert wiped.is_error and wiped.text == (
            "The gateway's consent rules do not allow this tool call."
        )
        owned = await client.call_tool("shop__stall", {"customer_id": "C-9"})
        assert owned.is_error and owned.text == (
            "The gateway refused this call: customer_id can only be set by the gateway."
        )
        stalled = await client.call_tool("shop__stall", {})
        assert stalled.is_error and "got no answer within its deadline (0.3 s)" in stalled.text
    lines = [(r["tool"], r["decision"], r["by"], r["outcome"]) for r in read_audit(audit)]
    assert lines == [
        ("wipe", "deny", "server", "denied"),
        ("stall", "deny", "host-owned", "denied"),
        ("stall", "allow", "server", "timeout"),  # the typed outcome, not a worded result
    ]
    assert all(r["agent"] == "gateway" for r in read_audit(audit))


@pytest.mark.timing
async def test_the_deadline_bounds_a_backend_task(tmp_path: Path) -> None:
    # The chain's Deadline covers the whole call: a backend task past it is cancelled on the
    # backend (`tasks/cancel`, CANC-06, TASK-14), and the front's task says why.
    audit = tmp_path / "audit.jsonl"
    entry = {"command": sys.executable, "args": [TASKS], "timeouts": {"rebuild": 0.5}}
    async with serving(gateway("jobs", entry, audit=audit)) as front, Client(front) as client:
        created = await client.request("tools/call", {"name": "jobs__rebuild"}, raw=True)
        assert created["resultType"] == "task", created
        final = await settled(client, created["taskId"])
        assert final["status"] == "completed" and final["result"]["isError"] is True, final
        [text] = [block["text"] for block in final["result"]["content"]]
        assert "got no answer within its deadline (0.5 s) and was cancelled" in text
        assert (await client.call_tool("jobs__was_cancelled", {})).text == "true"
    outcomes = [(r["tool"], r["outcome"]) for r in read_audit(audit)]
    assert outcomes == [("rebuild", "timeout"), ("was_cancelled", "ok")]


async def test_a_backend_task_that_ends_cancelled_ends_cancelled_at_the_front() -> None:
    # The tasks extension's `cancelled` is a status, not a result: the front's task reads
    # `cancelled` too, never `completed` with isError (TASK-10, TASK-17).
    entry = {"command": sys.executable, "args": [TASKS]}
    async with serving(gateway("jobs", entry)) as front, Client(front) as client:
        created = await client.request("tools/call", {"name": "jobs__give_up"}, raw=True)
        assert created["resultType"] == "task", created
        final = await settled(client, created["taskId"])
        assert final["status"] == "cancelled", final
        assert "result" not in final and "error" not in final


@pytest.mark.timing
async def test_the_users_time_does_not_count_against_the_deadline() -> None:
    # A 2025-11-25 front client is asked on its session while the call waits; the deadline
    # stands still meanwhile (as in the host's calls), then runs on.
    deadline = scaled(1.0)

    async def slow_user(request: Elicitation) -> dict[str, Any]:
        await asyncio.sleep(1.5 * deadline)  # the user thinks longer than the deadline
        return accept(name="Ada") if "name" in request.message else accept(city="Paris")

    async with serving(build("app")) as url:
        entry = {"url": url, "timeouts": {"greet": deadline}}
        async with (
            serving(gateway("app", entry)) as front,
            Client(front, era="legacy", elicitation=slow_user) as client,
        ):
            greeted = await client.call_tool("app__greet", {})
            assert not greeted.is_error and greeted.text == "Hello Ada from Paris!"


@pytest.mark.timing
async def test_progress_restarts_the_deadline_when_configured() -> None:
    # `restartOnProgress` (CANC-08): a call twice as long as its deadline finishes, as each
    # progress notification starts the deadline again.
    window = scaled(0.6)
    rule = {"seconds": window, "restartOnProgress": True, "max": 20 * window}
    entry = {"command": sys.executable, "args": [SERVER], "timeouts": {"crawl": rule}}
    async with serving(gateway("shop", entry)) as front, Client(front) as client:
        arguments = {"steps": 6, "pause": window / 3}
        crawled = await client.call_tool("shop__crawl", arguments)
        assert not crawled.is_error and crawled.text == "crawled 6 steps"
