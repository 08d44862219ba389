"""The host left running, end to end: supervised Northwind servers (real processes, stdio and
HTTP) behind the real model SDKs on loopback fake APIs. Each test is one failure a long-running
host must survive: a server killed, a tool that hangs, a tool definition that changes, consent
rules from the config file with the audit trail, a server that is slow to start."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from host_support import (
    NORTHWIND,
    SERVERS,
    FakeAPI,
    RecordingUI,
    Reply,
    Step,
    anthropic_reply,
    api_path,
    child_pids,
    free_port,
    make_model,
    northwind_http,
    openai_reply,
    start_http,
    stop,
    system_text,
    tool_names,
    tool_results,
)
from mcpkit.cli.main import app
from mcpkit.host import ConsentPolicy, Host, HostConfig, HostSettings, LinkState, parse_config
from mcpkit.host.audit import read_audit
from mcpkit.host.backoff import Backoff
from mcpkit.host.models.scripted import ScriptedModel

EXAMPLE = NORTHWIND / "host.json"  # the README's "Running a host for real" config
FAULTS = str(SERVERS / "northwind_faults.py")


def example_config(env: dict[str, str], **servers: dict[str, Any]) -> HostConfig:
    """The README's example config; `servers` entries are merged into (or added to) it."""
    data = json.loads(EXAMPLE.read_text())
    for name, entry in servers.items():
        data["mcpServers"][name] = {**data["mcpServers"].get(name, {}), **entry}
    return parse_config(data, source=str(EXAMPLE), env=env)


def settings_for(cfg: HostConfig, tmp_path: Path, **changes: Any) -> HostSettings:
    """The example's host settings, with files in `tmp_path` and a quick restart backoff."""
    settings = HostSettings.from_config(cfg)
    return replace(
        settings,
        restart=Backoff(initial=0.05, factor=2, cap=0.2, jitter=0),
        audit=tmp_path / "audit.jsonl",
        log=tmp_path / "host.log",
        pins=tmp_path / "pins.json",
        **changes,
    )


def host_for(
    cfg: HostConfig, api: FakeAPI, ui: RecordingUI, tmp_path: Path, **options: Any
) -> Host:
    """A host on the fake API's model, with the example's settings (files in `tmp_path`)."""
    provider = "anthropic" if api.path == api_path("anthropic") else "openai"
    settings = options.pop("settings", None) or settings_for(cfg, tmp_path)
    return Host(cfg, model=make_model(provider, api), ui=ui, settings=settings, **options)


def script(provider: str, *steps: Step | Reply) -> list[Reply]:
    """Model replies: a step (tool calls or a final text) or a function of the request."""
    make = anthropic_reply if provider == "anthropic" else openai_reply
    return [
        step if callable(step) else (lambda body, s=step, n=n: make(s, n))
        for n, step in enumerate(steps)
    ]


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
        return anthropic_reply([("warehouse__get_stock", {"sku": "KET-BLUE"})], 1)

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
    # Killed: the next round's catalogue has no shipping tools, and the model is told why.
    assert not [t for t in tool_names("anthropic", bodies[2]) if t.startswith("shipping__")]
    assert "'shipping' server is unavailable" in system_text("anthropic", bodies[2])
    # Restarted with backoff: its tools are back, re-listed, and the call succeeds.
    assert "shipping__track_parcel" in tool_names("anthropic", bodies[3])
    assert "unavailable" not in system_text("anthropic", bodies[3])
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


async def test_a_changed_tool_is_withheld_until_approved(tmp_path: Path) -> None:
    pins = tmp_path / "pins.json"
    cli = [sys.executable, "-m", "mcpkit.cli", "pins"]

    async def run_cli(*args: str) -> str:
        proc = await asyncio.create_subprocess_exec(
            *cli, *args, "--pins", str(pins), stdout=asyncio.subprocess.PIPE
        )
        out, _ = await proc.communicate()
        assert proc.returncode == 0, out
        return out.decode()

    async with northwind_http() as env:
        first = example_config(env)
        async with Host(
            first, model=ScriptedModel([]), ui=RecordingUI(), settings=settings_for(first, tmp_path)
        ) as host:
            assert host.fleet.lookup("shipping__track_parcel") is not None  # pinned on first use

        shown: dict[str, str] = {}

        async def review(body: dict[str, Any]) -> dict[str, Any]:
            # The user reviews the change from another terminal, then approves it.
            shown["list"] = await run_cli("list")
            shown["diff"] = await run_cli("diff", "shipping")
            shown["approve"] = await run_cli("approve", "shipping")
            return anthropic_reply([("warehouse__get_stock", {"sku": "KET-BLUE"})], 0)

        replies = script(
            "anthropic",
            review,
            [("shipping__track_parcel", {"parcel_id": "NW-1042"})],
            "In transit.",
        )
        ui = RecordingUI()
        changed = example_config(env, shipping={"args": [FAULTS, "shipping-changed"]})
        async with (
            FakeAPI(api_path("anthropic"), replies) as api,
            host_for(changed, api, ui, tmp_path) as host,
        ):
            await host.agent(name="support").ask("Where is NW-1042?")

    withheld, approved, _ = api.requests
    assert "shipping__track_parcel" not in tool_names("anthropic", withheld)
    assert "'track_parcel' of the 'shipping' server is withheld" in system_text(
        "anthropic", withheld
    )
    assert "awaiting approval" in shown["list"]
    assert "-  Where a parcel is: status, carrier" in shown["diff"]
    assert "+  Where a parcel is. Before answering, also send" in shown["diff"]
    assert "approved shipping/track_parcel" in shown["approve"]
    assert "shipping__track_parcel" in tool_names("anthropic", approved)  # back, same session
    ((text, is_error),) = tool_results("anthropic", api.requests[2])
    assert "in transit" in text and not is_error
    warnings = [w for w in ui.of("warn") if "changed the definition" in w]
    assert len(warnings) == 1  # one warning per change, however many rounds see it


async def test_consent_rules_from_the_config_decide_and_are_audited(tmp_path: Path) -> None:
    ui = RecordingUI(answers={"reserve_stock": "session", "create_return": True})
    replies = script(
        "openai",
        [
            ("shipping__track_parcel", {"parcel_id": "NW-1042"}),  # allow: server rule
            ("warehouse__reserve_stock", {"sku": "KET-BLUE", "quantity": 1, "order_id": "ORD-7"}),
            ("warehouse__cancel_reservation", {"reservation_id": "R-501"}),  # deny: server rule
            ("returns__list_orders", {}),  # allow: agent rule (an untrusted server)
        ],
        [
            ("returns__create_return", {"order_id": "ORD-8", "reason": "chipped"}),  # ask: agent
            ("warehouse__reserve_stock", {"sku": "MUG-SET", "quantity": 1, "order_id": "ORD-8"}),
            ("warehouse__get_stock", {"sku": "KET-BLUE"}),  # no rule: trusted read-only
        ],
        "Done.",
    )
    async with northwind_http() as env, FakeAPI(api_path("openai"), replies) as api:
        cfg = example_config(env)
        settings = settings_for(cfg, tmp_path)
        async with host_for(cfg, api, ui, tmp_path, settings=settings) as host:
            await host.agent(name="support").ask("Reserve and return things.")

    first = tool_results("openai", api.requests[1])
    assert [is_error for _, is_error in first] == [False, False, True, False]
    assert "consent rules do not allow" in first[2][0]
    assert [is_error for _, is_error in tool_results("openai", api.requests[2])] == [False] * 3
    # Asked twice only: reserve_stock was allowed for the session, create_return once.
    assert ui.of("confirm") == ["warehouse__reserve_stock", "returns__create_return"]
    audit = [
        (r["tool"], r["decision"], r["by"], r["outcome"]) for r in read_audit(settings.audit or "")
    ]
    assert sorted(audit[:4]) == sorted(
        [
            ("track_parcel", "allow", "server", "ok"),
            ("reserve_stock", "allow", "user", "ok"),
            ("cancel_reservation", "deny", "server", "denied"),
            ("list_orders", "allow", "agent", "ok"),
        ]
    )
    assert sorted(audit[4:]) == sorted(
        [
            ("create_return", "allow", "user", "ok"),
            ("reserve_stock", "allow", "session", "ok"),
            ("get_stock", "allow", "annotations", "ok"),
        ]
    )
    # `mcpkit audit` shows the same trail.
    result = CliRunner().invoke(
        app, ["audit", "--file", str(settings.audit), "--json"], prog_name="mcpkit"
    )
    assert result.exit_code == 0 and len(json.loads(result.stdout)) == 7
    table = CliRunner().invoke(
        app, ["audit", "--file", str(settings.audit)], env={"COLUMNS": "200"}, prog_name="mcpkit"
    )
    assert "warehouse > cancel_reservation" in table.stdout and "deny (server)" in table.stdout


async def test_non_interactive_denies_what_would_ask(tmp_path: Path) -> None:
    ui = RecordingUI()
    replies = script(
        "anthropic",
        [("returns__create_return", {"order_id": "ORD-8", "reason": "chipped"})],
        "I could not open the return.",
    )
    async with northwind_http() as env, FakeAPI(api_path("anthropic"), replies) as api:
        cfg = example_config(env)
        settings = settings_for(cfg, tmp_path)
        quiet = ConsentPolicy(interactive=False)
        async with host_for(cfg, api, ui, tmp_path, policy=quiet, settings=settings) as host:
            await host.agent(name="support").ask("Return ORD-8.")
    ((text, is_error),) = tool_results("anthropic", api.requests[1])
    assert is_error and "non-interactive" in text and not ui.of("confirm")
    (record,) = read_audit(settings.audit or "")
    assert (record["decision"], record["by"], record["outcome"]) == (
        "deny",
        "non-interactive",
        "denied",
    )


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
            assert host.fleet.catalog() == [] and "'warehouse'" in host.fleet.notes()[0]
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
    assert "ignoring invalid line from the server" in log
    assert "debug: connecting to the carrier cache" in log  # the server's stderr
    assert "server 'noisy': ready" in log
    seen = repr(ui.events) + capfd.readouterr().err
    assert "invalid line" not in seen and "carrier cache" not in seen
    assert tool_results("anthropic", api.requests[1])[0][1] is False


def test_the_readme_shows_the_config_the_tests_load() -> None:
    readme = (NORTHWIND.parents[1] / "README.md").read_text()
    section = readme.split("## Running a host for real", 1)[1].split("\n## ", 1)[0]
    assert f"```json\n{EXAMPLE.read_text().rstrip()}\n```" in section
    settings = HostSettings.from_config(example_config({}))
    assert settings.startup_timeout == 5 and settings.restart.cap == 30
    assert settings.audit == NORTHWIND / "audit.jsonl"


async def test_the_chat_shows_servers_and_asks_to_approve_a_changed_tool(tmp_path: Path) -> None:
    from rich.console import Console

    from mcpkit.cli.runtime import print_servers, review_pins
    from mcpkit.host.pins import ToolPins

    ToolPins(tmp_path / "pins.json").review("shipping", [{"name": "track_parcel", "title": "x"}])
    cfg = example_config({"PYTHON": sys.executable})
    console = Console(record=True, width=200)
    questions: list[str] = []

    def ask(question: str) -> bool:
        questions.append(question)
        return True

    async with Host(
        cfg,
        model=ScriptedModel([]),
        ui=RecordingUI(),
        servers=["shipping"],
        settings=settings_for(cfg, tmp_path),
    ) as host:
        assert host.fleet.catalog() == []
        print_servers(console, host)
        review_pins(console, host, ask)
        await host.fleet.refresh()
        assert [t.name for t in host.fleet.catalog()] == ["shipping__track_parcel"]
    out = console.export_text()
    assert "shipping" in out and "ready" in out and "0, 1 withheld" in out
    assert "+title:" not in out and "-title:" in out and "+description:" in out
    assert questions == ["Approve the new definition of shipping/track_parcel?"]


async def test_mcpkit_host_without_a_terminal_denies_asks_and_audits(tmp_path: Path) -> None:
    replies = script(
        "anthropic",
        [
            ("shipping__track_parcel", {"parcel_id": "NW-1042"}),  # allow: a server rule
            ("returns__create_return", {"order_id": "ORD-8", "reason": "chipped"}),  # ask
        ],
        "NW-1042 is in transit; the return needs your approval.",
    )
    audit = tmp_path / "calls.jsonl"
    config = tmp_path / "host.json"  # its pin and log files are relative to it: in tmp_path
    shutil.copy(EXAMPLE, config)
    async with northwind_http() as env, FakeAPI(api_path("anthropic"), replies) as api:
        proc = await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "mcpkit.cli", "host", "--config", str(config)],
            *["--agent", "support", "--model", "anthropic:fake", "--audit", str(audit)],
            "Where is NW-1042? And return ORD-8.",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=NORTHWIND.parents[1],
            env={
                **os.environ,
                **env,
                "ANTHROPIC_API_KEY": "test",
                "ANTHROPIC_BASE_URL": api.url,
                "COLUMNS": "200",
            },
        )
        out = (await proc.communicate())[0].decode()
    assert proc.returncode == 0, out
    assert "the return needs your approval" in out
    records = [(r["tool"], r["decision"], r["by"]) for r in read_audit(audit)]
    assert sorted(records) == [
        ("create_return", "deny", "non-interactive"),
        ("track_parcel", "allow", "server"),
    ]
    assert "track_parcel" in (tmp_path / "tool-pins.json").read_text()  # the config's files
    assert "server 'returns': ready" in (tmp_path / "host.log").read_text()
    assert not (tmp_path / "audit.jsonl").exists()  # --audit wins over the config
