"""What the user controls in a host left running, end to end over the Northwind servers: tool
definitions that change (withheld until `mcpkit pins approve`), consent rules from the config
file, the audit trail (`mcpkit audit`), non-interactive mode, and the chat's `/servers` and
approval prompt. The config is the docs' example (docs/host-runtime.md),
`examples/northwind/host.json`."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from host_support import (
    EXAMPLE,
    FAULTS,
    NORTHWIND,
    FakeAPI,
    RecordingUI,
    anthropic_reply,
    api_path,
    example_config,
    host_for,
    northwind_http,
    script,
    settings_for,
    system_text,
    tool_names,
    tool_results,
)
from mcpkit.cli.main import app
from mcpkit.host import ConsentPolicy, Host, HostSettings
from mcpkit.host.audit import read_audit
from mcpkit.host.models.scripted import ScriptedModel


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
        settings = settings_for(first, tmp_path, pins=pins)
        async with Host(
            first, model=ScriptedModel([]), ui=RecordingUI(), settings=settings
        ) as host:
            assert host.fleet.lookup("shipping__track_parcel") is None  # new: awaits approval
            for batch in host.fleet.questions():  # the user approves each new server whole
                assert all(host.fleet.approve(change) for change in batch)
            await host.fleet.refresh()
            assert host.fleet.lookup("shipping__track_parcel") is not None

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
            host_for(changed, api, ui, tmp_path, settings=settings) as host,
        ):
            await host.agent(name="support").ask("Where is NW-1042?")

    withheld, approved, _ = api.requests
    assert "shipping__track_parcel" not in tool_names("anthropic", withheld)
    assert "'track_parcel' of the 'shipping' server (changed)" in system_text("anthropic", withheld)
    assert "awaiting approval" in shown["list"]
    assert "-  Find out where a Northwind parcel is." in shown["diff"]
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


def test_the_docs_show_the_config_the_tests_load() -> None:
    page = (NORTHWIND.parents[1] / "docs/host-runtime.md").read_text()
    section = page.split("# Running a host for real", 1)[1].split("\n## ", 1)[0]
    assert f"```json\n{EXAMPLE.read_text().rstrip()}\n```" in section
    settings = HostSettings.from_config(example_config({}))
    assert settings.startup_timeout == 5 and settings.restart.cap == 30
    assert settings.audit == NORTHWIND / "audit.jsonl"


async def test_the_chat_shows_servers_and_asks_to_approve_a_changed_tool(tmp_path: Path) -> None:
    from rich.console import Console

    from mcpkit.cli.runtime import print_servers, review_pins
    from mcpkit.host.pins import ToolPins

    ToolPins(tmp_path / "pins.json").pin("shipping", [{"name": "track_parcel", "title": "x"}])
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
        settings=settings_for(cfg, tmp_path, pins=tmp_path / "pins.json"),
    ) as host:
        assert host.fleet.catalog() == []
        print_servers(console, host)
        review_pins(console, host, ask)
        await host.fleet.refresh()
        assert [t.name for t in host.fleet.catalog()] == ["shipping__track_parcel"]
    out = console.export_text()
    # track_parcel changed; reserve_replacement, for the parcel card app only, is new.
    assert "shipping" in out and "ready" in out and "0, 2 withheld" in out
    assert "+title:" not in out and "-title:" in out and "+description:" in out
    assert questions == [
        "Approve the new definition of shipping/track_parcel?",
        "Approve the new tool shipping/reserve_replacement?",  # the server was pinned before
    ]


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
        for server in ("shipping", "warehouse", "returns"):  # configured: approved whole
            approve = await asyncio.create_subprocess_exec(
                *[sys.executable, "-m", "mcpkit.cli", "pins", "approve", server, "-c", str(config)],
                stdout=asyncio.subprocess.PIPE,
                cwd=NORTHWIND.parents[1],
                env={**os.environ, **env},
            )
            assert "approved the" in (await approve.communicate())[0].decode()
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
