"""The host left running, end to end: supervised Northwind servers (real processes, stdio and
HTTP) behind the real model SDKs on loopback fake APIs. Each test is one failure a long-running
host must survive: a server killed, a tool that hangs, a server slow to start or gone away,
and servers that print noise."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from host_support import (
    FAULTS,
    NORTHWIND,
    FakeAPI,
    RecordingUI,
    anthropic_reply,
    api_path,
    child_pids,
    example_config,
    host_for,
    northwind_http,
    script,
    settings_for,
    start_http,
    stop,
    system_text,
    tool_names,
    tool_results,
)
from mcpkit.host import LinkState, parse_config
from mcpkit.host.audit import read_audit
from support import free_port

pytestmark = pytest.mark.timing


async def test_a_killed_stdio_server_is_restarted_in_the_same_conversation(tmp_path: Path) -> None:
    server = tmp_path / "shipping_server.py"
    shutil.copy(NORTHWIND / "shipping_server.py", server)
    parked = tmp_path / "parked.py"
    ui = RecordingUI()

    async def kill(body: dict[str, Any]) -> dict[str, Any]:
        (pid,) = child_pids(str(server))
        server.rename(parked)  # restarts fail until it is back: the outage is visible
        os.kill(pid, signal.SIGKILL)
        await host.fleet.wait_state("shipping", LinkState.DOWN)
        calls = [("warehouse__get_stock", {"sku": "KET-BLUE"}), ("shipping__track_parcel", {})]
        return anthropic_reply(calls, 1)

    async def restore(body: dict[str, Any]) -> dict[str, Any]:
        parked.rename(server)
        await host.fleet.wait_state("shipping", LinkState.READY)
        return anthropic_reply([("warehouse__get_stock", {"sku": "MUG-SET"})], 2)

    replies = script(
        "anthropic",
        [("shipping__track_parcel", {"parcel_id": "NW-1042"})],
        kill,
        restore,
        [("shipping__track_parcel", {"parcel_id": "NW-1043"})],
        "NW-1042 is in transit; NW-1043 was delivered.",
    )
    async with northwind_http() as env, FakeAPI(api_path("anthropic"), replies) as api:
        cfg = example_config(env, shipping={"args": [str(server)]})
        async with host_for(cfg, api, ui, tmp_path) as host:
            answer = await host.agent(name="support").ask("Where are NW-1042 and NW-1043?")

    bodies = api.requests
    assert answer.endswith("was delivered.") and len(bodies) == 5
    assert "shipping__track_parcel" in tool_names("anthropic", bodies[0])
    # Killed: its tools stay known while it restarts; a call says when to try again, and the
    # model is told why.
    (_, stock_error), (text, is_error) = tool_results("anthropic", bodies[2])
    assert not stock_error and is_error and "'shipping' server is restarting (attempt " in text
    assert "shipping__track_parcel" in tool_names("anthropic", bodies[2])
    assert "'shipping' server is restarting" in system_text("anthropic", bodies[2])
    # Restarted with backoff: its tools are re-listed, and the call succeeds.
    assert "shipping__track_parcel" in tool_names("anthropic", bodies[3])
    assert "restarting" not in system_text("anthropic", bodies[3])
    ((text, is_error),) = tool_results("anthropic", bodies[4])
    assert "delivered" in text and not is_error
    states = ui.of("state")
    assert states.index(("shipping", "down")) < states.index(("shipping", "ready"))


async def test_a_hung_tool_fails_at_its_deadline_while_other_calls_succeed(
    tmp_path: Path,
) -> None:
    ui = RecordingUI()
    replies = script(
        "anthropic",
        [
            ("warehouse__stock_report", {}),
            ("shipping__track_parcel", {"parcel_id": "NW-1042"}),
            ("returns__list_orders", {}),
            ("warehouse__get_stock", {"sku": "KET-BLUE"}),
        ],
        [("warehouse__report_cancelled", {})],
        "The stock report timed out; everything else is answered.",
    )
    async with (
        northwind_http(warehouse=[FAULTS, "warehouse-hang"]) as env,
        FakeAPI(api_path("anthropic"), replies) as api,
    ):
        # An exact name wins over the example's "*_report" pattern: a short deadline here.
        cfg = example_config(env, warehouse={"timeouts": {"stock_report": 0.5}})
        settings = settings_for(cfg, tmp_path)
        async with host_for(cfg, api, ui, tmp_path, settings=settings) as h:
            await h.agent(name="support").ask("Stock report, parcel, orders and kettles?")

    report, parcel, orders, stock = tool_results("anthropic", api.requests[1])
    assert report[1] and "no answer within its deadline (0.5 s) and was cancelled" in report[0]
    assert "may or may not" not in report[0]  # a trusted read-only tool: nothing to check
    assert not parcel[1] and "in transit" in parcel[0]
    assert not orders[1] and "ORD-7" in orders[0]
    assert not stock[1] and '"in_stock"' in stock[0]
    # CANC-04: the deadline closed the HTTP stream, and the server cancelled the handler.
    ((cancelled, _),) = tool_results("anthropic", api.requests[2])
    assert cancelled.strip() == "true"
    outcomes = {r["tool"]: r["outcome"] for r in read_audit(settings.audit or "")}
    assert outcomes["stock_report"] == "timeout" and outcomes["get_stock"] == "ok"


async def test_start_up_does_not_wait_for_a_slow_server(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    ui = RecordingUI()

    def open_gate() -> None:
        with open(gate, "wb") as fifo:
            fifo.write(b"go")

    async def first_round(body: dict[str, Any]) -> dict[str, Any]:
        await asyncio.to_thread(open_gate)  # the slow server finally answers
        await host.fleet.wait_state("late", LinkState.READY)
        return anthropic_reply([("warehouse__get_stock", {"sku": "KET-BLUE"})], 0)

    replies = script("anthropic", first_round, [("late__hello", {})], "Hello.")
    async with northwind_http() as env, FakeAPI(api_path("anthropic"), replies) as api:
        late = {"command": sys.executable, "args": [FAULTS, "late", str(gate)], "trusted": True}
        cfg = example_config(env, late=late)
        settings = settings_for(cfg, tmp_path, startup_timeout=1.0)
        async with host_for(cfg, api, ui, tmp_path, settings=settings) as host:
            # The host started without the slow server (it is still blocked on its gate).
            assert host.fleet.links["late"].state is LinkState.CONNECTING
            assert host.fleet.links["warehouse"].state is LinkState.READY
            await host.agent().ask("Say hello.")

    first, second, third = api.requests
    offered = tool_names("anthropic", first)
    assert {"warehouse__get_stock", "returns__list_orders"} <= set(offered)
    assert not [t for t in offered if t.startswith("late__")]
    assert "'late' server is still starting" in system_text("anthropic", first)
    assert "late__hello" in tool_names("anthropic", second)  # joined when it answered
    assert tool_results("anthropic", third) == [("hello, finally", False)]
    assert ("late", "ready") in ui.of("state")
    assert any("'late' is still starting" in text for text in ui.of("info"))


async def test_an_http_server_that_goes_away_is_reconnected(tmp_path: Path) -> None:
    port = free_port()
    warehouse = [str(NORTHWIND / "warehouse_server.py")]
    proc = await start_http(warehouse, port)
    ui = RecordingUI()
    replies = script("anthropic", [("warehouse__get_stock", {"sku": "MUG-SET"})], "52 sets.")
    cfg = example_config({"WAREHOUSE_PORT": str(port), "RETURNS_PORT": "1"})
    try:
        async with (
            FakeAPI(api_path("anthropic"), replies) as api,
            host_for(cfg, api, ui, tmp_path, servers=["warehouse"]) as host,
        ):
            proc.kill()
            await host.fleet.wait_state("warehouse", LinkState.DOWN)
            await host.fleet.refresh()
            # Its tools stay known while it restarts (a call says when to try again).
            assert "warehouse__get_stock" in {t.name for t in host.fleet.catalog()}
            assert "'warehouse' server is restarting" in host.fleet.notes()[0]
            proc = await start_http(warehouse, port)  # back on the same address
            await host.fleet.wait_state("warehouse", LinkState.READY)
            assert await host.agent().ask("Mug sets?") == "52 sets."
    finally:
        await stop(proc)
    ((text, is_error),) = tool_results("anthropic", api.requests[1])
    assert '"in_stock":52' in text.replace(" ", "") and not is_error
    states = ui.of("state")
    assert states[0] == ("warehouse", "down") and states[-1] == ("warehouse", "ready")


async def test_server_noise_goes_to_the_log_file(tmp_path: Path, capfd: Any) -> None:
    ui = RecordingUI()
    replies = script("anthropic", [("noisy__track_parcel", {"parcel_id": "NW-1043"})], "Ok.")
    noisy = {"command": sys.executable, "args": [FAULTS, "noisy"], "trusted": True}
    cfg = parse_config({"mcpServers": {"noisy": noisy}})
    settings = settings_for(cfg, tmp_path)
    async with (
        FakeAPI(api_path("anthropic"), replies) as api,
        host_for(cfg, api, ui, tmp_path, settings=settings) as host,
    ):
        await host.agent().ask("NW-1043?")
    log = (tmp_path / "host.log").read_text()
    assert "server 'noisy': ignoring an invalid line on its stdout" in log
    assert "debug: connecting to the carrier cache" in log  # the server's stderr
    assert "server 'noisy': ready" in log
    seen = repr(ui.events) + capfd.readouterr().err
    assert "invalid line" not in seen and "carrier cache" not in seen
    assert tool_results("anthropic", api.requests[1])[0][1] is False
