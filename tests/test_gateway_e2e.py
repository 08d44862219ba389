"""`mcpkit gateway` over the Northwind config (shipping over stdio, warehouse and returns over
Streamable HTTP, all real processes), driven by the official SDK client (`mcp` 2.3.0, auto and
legacy modes), the MCP Inspector CLI (legacy and modern eras) and mcpkit's own client (both
eras): namespaced tools of all three servers; a denied tool never reaches its server; "ask"
becomes an elicitation to the client and the call runs only on accept; host-owned arguments
are refused; token scopes choose the servers a caller sees; a server's list change reaches a
listener on the gateway; a server that dies leaves the list and comes back."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import interop_support
from gateway_support import Answers, accept
from host_support import NORTHWIND, SERVERS, child_pids, northwind_http
from inspector_support import inspector_cli
from mcpkit.client import Client, ClientError
from mcpkit.protocol.errors import MCPError
from support import ROOT, free_port, scaled, wait_port

SDK_CLIENT = ROOT / "tests/interop/sdk_gateway_client.py"


@dataclass
class Running:
    url: str
    proc: asyncio.subprocess.Process
    record: Path  # every tool the warehouse was asked to run, one per line
    audit: Path
    log: Path

    def warehouse_ran(self) -> list[str]:
        return self.record.read_text().split()

    def audit_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.audit.read_text().splitlines()]


async def approve_backends(config: Path, names: list[str], env: dict[str, str]) -> None:
    """Each backend approved whole when it is configured (`mcpkit pins approve NAME --config`):
    a backend the pin file has never seen offers nothing until then (quarantine)."""
    procs = [
        await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "mcpkit", "pins", "approve", name, "--config", str(config)],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=asyncio.subprocess.PIPE,
        )
        for name in names
    ]
    for proc in procs:
        out = (await asyncio.wait_for(proc.communicate(), scaled(60)))[0].decode()
        assert proc.returncode == 0 and "approved the" in out, out


@contextlib.asynccontextmanager
async def northwind_gateway(tmp: Path, *trusting: str) -> AsyncIterator[Running]:
    """The docs' gateway; `trusting`: backends whose added tools are offered at once
    (`"trustNewTools": true`; otherwise they wait for approval, tests/test_gateway.py)."""
    record = tmp / "warehouse-calls.txt"
    record.touch()
    recorded = (str(SERVERS / "northwind_faults.py"), "warehouse-recorded", str(record))
    async with northwind_http(warehouse=recorded) as env:
        config = tmp / "gateway.json"  # audit and pins are written next to it
        data = json.loads((NORTHWIND / "gateway.json").read_text())
        for name in trusting:
            data["mcpServers"][name]["trustNewTools"] = True
        # The gateway opens its port once its backends are up or this has passed: on a busy
        # machine the docs' 10 s can pass first, and a backend's tools would join only later.
        data["host"]["startupTimeout"] = scaled(60)
        config.write_text(json.dumps(data))
        await approve_backends(config, list(data["mcpServers"]), env)
        port = free_port()
        log = tmp / "gateway.log"
        with log.open("wb") as err:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "mcpkit", "gateway", "--config", str(config),
                "--port", str(port), "--log-level", "info",
                cwd=ROOT, env={**os.environ, **env}, stdout=asyncio.subprocess.DEVNULL,
                stderr=err,
            )  # fmt: skip
        try:
            await wait_port(port, proc, 60)
            yield Running(
                f"http://127.0.0.1:{port}/mcp", proc, record, tmp / "gateway-audit.jsonl", log
            )
        finally:
            if proc.returncode is None:
                proc.terminate()
            await asyncio.wait_for(proc.wait(), scaled(20))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


NAMES = {
    "shipping__track_parcel",
    "warehouse__get_stock",
    "warehouse__reserve_stock",
    "returns__list_orders",
    "returns__create_return",
}


# -- the official SDK client --------------------------------------------------------------
@pytest.fixture(scope="module")
def sdk_python() -> str:
    return str(interop_support.sdk_python("2.3.0", "uvicorn", override_env="MCPKIT_INTEROP_SDK_PY"))


async def test_official_sdk_client_through_the_gateway(sdk_python: str, tmp_path: Path) -> None:
    async with northwind_gateway(tmp_path) as gateway:
        for mode, version in (("auto", "2026-07-28"), ("legacy", "2025-11-25")):
            proc = await asyncio.create_subprocess_exec(
                sdk_python, str(SDK_CLIENT), gateway.url, "dev-alice", mode,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            out, err = await asyncio.wait_for(proc.communicate(), scaled(120))
            assert proc.returncode == 0, err.decode()[-3000:]
            seen = json.loads(out.decode().strip().splitlines()[-1])
            assert seen["protocolVersion"] == version, mode
            assert seen["serverName"] == "northwind"
            assert set(seen["tools"]) >= NAMES
            assert '"in transit"' in seen["track"]
            assert '"KET-BLUE"' in seen["stock"]
            assert "ORD-7" in seen["orders"] and "ORD-9" not in seen["orders"]  # alice's own
            assert seen["elicited"] == [
                'Allow warehouse > reserve_stock with {"sku":"MUG-SET","quantity":1,'
                '"order_id":"ORD-8"}?'
            ]
            assert "reservation_" in seen["reserved"]
            assert seen["denied"][0] and "consent rules do not allow" in seen["denied"][1]
            assert seen["forged"][0] and "can only be set by the gateway" in seen["forged"][1]
        ran = gateway.warehouse_ran()
        assert ran.count("reserve_stock") == 2 and "cancel_reservation" not in ran


# -- the MCP Inspector CLI ---------------------------------------------------------------
async def inspect(url: str, era: str, *args: str, status: int = 0) -> dict[str, Any]:
    """One Inspector CLI run's result (it exits 5 for a tool result with isError)."""
    proc = await asyncio.create_subprocess_exec(
        str(inspector_cli()), "--cli", url, "--transport", "http",
        "--header", "Authorization: Bearer dev-alice", "--format", "json",
        "--protocol-era", era, "-q", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), scaled(120))
    assert proc.returncode == status, (out + err).decode()[-3000:]
    result: dict[str, Any] = json.loads(out)["result"]
    return result


def text(result: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in result.get("content", []))


async def test_mcp_inspector_cli_through_the_gateway(tmp_path: Path) -> None:
    inspector_cli()  # installs it (or skips) before the servers start
    async with northwind_gateway(tmp_path) as gateway:
        for era in ("legacy", "modern"):
            listed = await inspect(gateway.url, era, "--method", "tools/list")
            assert {t["name"] for t in listed["tools"]} >= NAMES
            call = ("--method", "tools/call", "--tool-name")
            track = await inspect(
                gateway.url, era, *call, "shipping__track_parcel", "--tool-arg", "parcel_id=NW-1042"
            )
            assert '"in transit"' in text(track)
            stock = await inspect(
                gateway.url, era, *call, "warehouse__get_stock", "--tool-arg", "sku=KET-BLUE"
            )
            assert '"in_stock"' in text(stock)
            orders = await inspect(gateway.url, era, *call, "returns__list_orders")
            assert "ORD-7" in text(orders)
            # The Inspector CLI cannot answer elicitations: "ask" is a deny for it.
            asked = await inspect(
                gateway.url, era, *call, "warehouse__reserve_stock",
                "--tool-args-json", '{"sku": "MUG-SET", "quantity": 1, "order_id": "ORD-8"}',
                status=5,
            )  # fmt: skip
            assert asked.get("isError") is True and "cannot ask the user" in text(asked)
        assert "reserve_stock" not in gateway.warehouse_ran()


# -- mcpkit's client: the rules, both eras ---------------------------------------------
@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_the_hosts_rules_hold_for_every_call(era: str, tmp_path: Path) -> None:
    async with northwind_gateway(tmp_path) as gateway:
        declined = Answers({"action": "decline"})
        async with Client(
            gateway.url, era=era, headers=bearer("dev-alice"), elicitation=declined
        ) as alice:  # type: ignore[arg-type]
            assert (await alice.call_tool("warehouse__get_stock", {"sku": "MUG-SET"})).text
            denied = await alice.call_tool("warehouse__cancel_reservation", {"reservation_id": "r"})
            assert denied.is_error and "consent rules do not allow" in denied.text
            order = {"sku": "MUG-SET", "quantity": 2, "order_id": "ORD-8"}
            refused = await alice.call_tool("warehouse__reserve_stock", order)
            assert refused.is_error and "did not allow" in refused.text
            assert declined.asked == [f"Allow warehouse > reserve_stock with {_compact(order)}?"]
            forged = await alice.call_tool("returns__list_orders", {"customer_id": "C-2002"})
            assert forged.is_error and "can only be set by the gateway" in forged.text
            stock = await alice.call_tool("warehouse__get_stock", {"sku": "MUG-SET"})
            assert stock.structured_content["in_stock"] == 52  # nothing was reserved
        assert gateway.warehouse_ran() == ["get_stock", "get_stock"]
        accepted = Answers(accept(remember=True))
        async with Client(
            gateway.url, era=era, headers=bearer("dev-bob"), elicitation=accepted
        ) as bob:  # type: ignore[arg-type]
            held = await bob.call_tool("warehouse__reserve_stock", order)
            assert not held.is_error and held.structured_content["quantity"] == 2
            again = await bob.call_tool("warehouse__reserve_stock", order)  # remembered
            assert not again.is_error and len(accepted.asked) == 1
            assert "ORD-9" in (await bob.call_tool("returns__list_orders", {})).text
        async with Client(gateway.url, era=era, headers=bearer("dev-alice")) as mute:
            silent = await mute.call_tool("warehouse__reserve_stock", order)
            assert silent.is_error and "cannot ask the user" in silent.text
        async with Client(gateway.url, era=era, headers=bearer("dev-guest")) as guest:
            seen = {t.name for t in await guest.list_tools()}  # the shipping scope only
            assert "shipping__track_parcel" in seen and all(
                n.startswith("shipping__") for n in seen
            )
            with pytest.raises((MCPError, ClientError)):  # 403 insufficient_scope
                await guest.call_tool("warehouse__get_stock", {"sku": "MUG-SET"})
        lines = gateway.audit_lines()
        decided = [(r["principal"], r["tool"], r["decision"], r["by"], r["outcome"]) for r in lines]
        assert ("c1001", "cancel_reservation", "deny", "host", "denied") in decided
        assert ("c1001", "reserve_stock", "deny", "user", "denied") in decided
        assert ("c1001", "list_orders", "deny", "host-owned", "denied") in decided
        assert ("c2002", "reserve_stock", "allow", "user", "ok") in decided
        assert ("c2002", "reserve_stock", "allow", "session", "ok") in decided
        assert ("c1001", "reserve_stock", "deny", "non-interactive", "denied") in decided


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


# -- changes and failures of the servers behind it ---------------------------------------
async def next_tools(client: Client, sub: Any, want: bool) -> set[str]:
    """Wait for list_changed notices until shipping's tool is (or is not) listed."""
    async with asyncio.timeout(scaled(30)):
        async for note in sub:
            assert note.method == "notifications/tools/list_changed"
            names = {t.name for t in await client.list_tools()}
            if ("shipping__track_parcel" in names) == want:
                return names
    raise AssertionError("the listen stream ended")


async def test_changes_and_failures_reach_the_gateways_clients(tmp_path: Path) -> None:
    async with (
        northwind_gateway(tmp_path, "warehouse") as gateway,
        Client(
            gateway.url, headers=bearer("dev-alice"), elicitation=Answers(accept(), accept())
        ) as alice,
        alice.subscribe(tools=True) as sub,
    ):
        tools = {t.name: t for t in await alice.list_tools()}
        assert "warehouse__reservation_status" not in tools
        # shipping's MCP App: its ui:// card, prefixed inside, read through the gateway.
        card = tools["shipping__track_parcel"].raw["_meta"]["ui"]["resourceUri"]
        assert card == "ui://shipping+shipping/parcel-card"
        assert "<html" in (await alice.read_resource(card)).text.lower()
        order = {"sku": "KET-BLUE", "quantity": 1, "order_id": "ORD-7"}
        held = await alice.call_tool("warehouse__reserve_stock", order)
        note = await asyncio.wait_for(anext(aiter(sub)), scaled(30))  # the warehouse added a tool
        assert note.method == "notifications/tools/list_changed"
        assert "warehouse__reservation_status" in {t.name for t in await alice.list_tools()}
        status = await alice.call_tool(
            "warehouse__reservation_status",
            {"reservation_id": held.structured_content["reservation_id"]},
        )
        assert not status.is_error, status.text
        assert status.structured_content["state"] == "held"
        # shipping (stdio, a child of the gateway) dies: its tools leave, then come back.
        (shipping,) = child_pids("shipping_server.py", parent=gateway.proc.pid)
        os.kill(shipping, signal.SIGKILL)
        names = await next_tools(alice, sub, want=False)
        assert "warehouse__get_stock" in names
        with pytest.raises(MCPError):
            await alice.call_tool("shipping__track_parcel", {"parcel_id": "NW-1042"})
        await next_tools(alice, sub, want=True)
        back = await alice.call_tool("shipping__track_parcel", {"parcel_id": "NW-1042"})
        assert '"in transit"' in back.text


async def test_the_gateway_over_stdio_as_claude_desktop_starts_it(tmp_path: Path) -> None:
    """The Claude Desktop entry of docs/gateway.md: `mcpkit gateway --stdio`, the caller's
    token from the environment (MCP_ACCESS_TOKEN, BASE-31)."""
    async with northwind_http() as env:
        config = tmp_path / "gateway.json"
        shutil.copy(NORTHWIND / "gateway.json", config)
        await approve_backends(config, ["shipping", "warehouse", "returns"], env)
        command = [sys.executable, "-m", "mcpkit", "gateway", "--config", str(config), "--stdio"]
        environment = {**os.environ, **env, "MCP_ACCESS_TOKEN": "dev-bob"}
        async with Client(command, env=environment, cwd=str(ROOT), stderr="discard") as bob:
            assert {t.name for t in await bob.list_tools()} >= NAMES
            assert "ORD-9" in (await bob.call_tool("returns__list_orders", {})).text
