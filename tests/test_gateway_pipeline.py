"""The gateway's calls go through the host's call pipeline (`for_gateway`): a consent denial, a
refused host-owned argument, a tool withheld since its definition changed, audit records and
a deadline, as an MCP client of the gateway sees them (a real stdio backend process)."""

from __future__ import annotations

import sys
from pathlib import Path

from gateway_support import serving
from mcpkit.client import Client
from mcpkit.gateway import Gateway
from mcpkit.host import HostSettings, ToolPins, parse_config
from mcpkit.host.audit import read_audit
from support import ROOT

SERVER = str(ROOT / "tests/servers/pipeline_server.py")


async def test_gateway_runs_its_policies(tmp_path: Path) -> None:
    pins = tmp_path / "pins.json"
    # `order` was pinned with another definition: it is withheld until approved.
    ToolPins(pins).review("shop", [{"name": "order", "description": "Order an item (old)."}])
    entry = {
        "command": sys.executable,
        "args": [SERVER],
        "hostOwned": {"customer_id": "C-7"},
        "timeouts": {"stall": 0.3},  # `stall` never answers: this always runs out
        "consent": {"allow": ["*"], "deny": ["wipe"]},
    }
    cfg = parse_config({"mcpServers": {"shop": entry}}, env={})
    audit = tmp_path / "audit.jsonl"
    gateway = Gateway(cfg, host=HostSettings(audit=audit, pins=pins))
    async with serving(gateway) as front, Client(front) as client:
        tools = {t.name for t in await client.list_tools()}
        assert tools == {"shop__stall", "shop__wipe"}  # `order` withheld
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
