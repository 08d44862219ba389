"""Consent rules from config (host, agent, server), deadlines, backoff, host settings, audit."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from mcpkit.host.audit import AuditLog, digest, read_audit, start_audit
from mcpkit.host.backoff import Backoff
from mcpkit.host.config import ConfigError, parse_config
from mcpkit.host.consent import ConsentPolicy, ConsentRules, Decision, PendingCall, Ruling
from mcpkit.host.deadlines import Clock, Deadline, DeadlineExceeded, within
from mcpkit.host.settings import HostSettings, agent_consent


def call(alias: str, trusted: bool = True, **hints: object) -> PendingCall:
    server, tool = alias.split("__")
    return PendingCall(alias, server, tool, {}, dict(hints), trusted)


def test_the_strictest_rule_wins_wherever_it_is_written() -> None:
    policy = ConsentPolicy(
        allow=["returns__*"],
        servers={"returns": ConsentRules(ask=("create_*",), deny=("delete_*",))},
        agent=ConsentRules(allow=("shipping__*",), deny=("returns__list_orders",)),
    )
    assert policy.judge(call("returns__create_return")) == Ruling(Decision.ASK, "server")
    assert policy.judge(call("returns__delete_all")) == Ruling(Decision.DENY, "server")
    assert policy.judge(call("returns__list_orders")) == Ruling(Decision.DENY, "agent")
    assert policy.judge(call("returns__get_order")) == Ruling(Decision.ALLOW, "host")
    assert policy.judge(call("shipping__track", trusted=False)) == Ruling(Decision.ALLOW, "agent")
    assert policy.judge(call("x__read", readOnlyHint=True)) == Ruling(Decision.ALLOW, "annotations")
    assert policy.judge(call("x__read", False, readOnlyHint=True)) == Ruling(
        Decision.ASK, "untrusted"
    )


def test_allow_for_this_session_and_non_interactive() -> None:
    policy = ConsentPolicy(servers={"db": ConsentRules(ask=("write",), deny=("drop",))})
    agent = policy.for_agent(ConsentRules())
    agent.grant(call("db__write"))
    assert agent.judge(call("db__write")) == Ruling(Decision.ALLOW, "session")
    agent.grant(call("db__drop"))
    assert agent.decide(call("db__drop")) is Decision.DENY  # a deny rule still wins
    assert policy.decide(call("db__write")) is Decision.ASK  # the grant was the agent's session
    quiet = ConsentPolicy(interactive=False)
    assert quiet.judge(call("x__write")) == Ruling(Decision.DENY, "non-interactive")
    assert quiet.judge(call("x__read", readOnlyHint=True)).decision is Decision.ALLOW


def test_consent_and_timeouts_from_the_config_file() -> None:
    cfg = parse_config(
        {
            "mcpServers": {
                "returns": {
                    "url": "http://127.0.0.1:1/mcp",
                    "timeout": 20,
                    "consent": {"ask": ["create_return"], "deny": ["delete_*"]},
                    "timeouts": {
                        "create_return": 30,
                        "export_*": {"seconds": 5, "restartOnProgress": True, "max": 60},
                    },
                }
            },
            "agents": {"desk": {"servers": ["returns"], "consent": {"allow": ["returns__*"]}}},
        }
    )
    server = cfg.servers["returns"]
    assert server.consent == ConsentRules(ask=("create_return",), deny=("delete_*",))
    assert server.deadline("create_return") == Deadline(30)
    assert server.deadline("export_csv") == Deadline(5, True, 60)
    assert server.deadline("list_orders") == Deadline(20)
    assert agent_consent(cfg, "desk") == ConsentRules(allow=("returns__*",))
    assert agent_consent(cfg, None) == ConsentRules()


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"consent": {"allow": "x"}}, "consent.allow"),
        ({"consent": {"maybe": []}}, "unknown keys"),
        ({"timeouts": {"t": -1}}, "positive number"),
        ({"timeouts": {"t": {"seconds": 5, "max": 1}}}, "at least"),
        ({"timeouts": {"t": {"seconds": 5, "restartOnProgress": "yes"}}}, "true or false"),
    ],
)
def test_bad_runtime_config_is_a_clear_error(entry: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_config({"mcpServers": {"s": {"command": "x", **entry}}}, source="my.json")
    assert "my.json: server 's'" in str(info.value)


def test_host_settings(tmp_path: Path) -> None:
    data = {
        "mcpServers": {},
        "host": {"startupTimeout": 2, "restart": {"initial": 0.1, "max": 4}, "audit": "a.jsonl"},
    }
    cfg = parse_config(data, source=str(tmp_path / "mcp.json"))
    settings = HostSettings.from_config(cfg)
    assert settings.startup_timeout == 2 and settings.audit == tmp_path / "a.jsonl"
    assert settings.restart == Backoff(0.1, 2.0, 4.0, 0.2) and settings.pins is None
    for bad, message in (({"startupTimeout": "soon"}, "startupTimeout"), ({"x": 1}, "unknown")):
        with pytest.raises(ConfigError, match=message):
            HostSettings.from_config(parse_config({"mcpServers": {}, "host": bad}))


def test_host_settings_paths_expand_like_every_other_value(tmp_path: Path) -> None:
    # issue 26: `${VAR:-default}` in audit/log/pins made files with that literal name.
    data = {
        "mcpServers": {},
        "host": {
            "audit": "${AUDIT:-audit.jsonl}",
            "log": "${LOGS}/host.log",
            "pins": "${PINS:-pins.json}",
        },
    }
    env = {"LOGS": str(tmp_path / "logs"), "PINS": ""}  # empty: the default, as elsewhere
    cfg = parse_config(data, source=str(tmp_path / "mcp.json"), env=env)
    settings = HostSettings.from_config(cfg)
    assert settings.audit == tmp_path / "audit.jsonl"
    assert settings.log == tmp_path / "logs/host.log"
    assert settings.pins == tmp_path / "pins.json"
    with pytest.raises(ConfigError, match="LOGS is not set"):
        HostSettings.from_config(parse_config(data, source="m.json", env={}))


def test_backoff_is_capped_and_exponential() -> None:
    b = Backoff(initial=0.5, factor=2, cap=3, jitter=0)
    assert [b.delay(n) for n in range(5)] == [0.5, 1, 2, 3, 3]
    assert 0.5 <= Backoff(1, 2, 8, jitter=0.5).delay(0) <= 1
    assert b.delay(10_000) == 3  # no overflow
    with pytest.raises(ValueError):
        Backoff(initial=5, cap=1)


@pytest.mark.timing
async def test_deadline_restarts_on_progress_under_an_overall_maximum() -> None:
    steps = asyncio.Queue[str]()

    async def reporting(clock: Clock) -> str:
        # Reports progress each time it is told to, and otherwise waits forever.
        while True:
            step = await steps.get()
            if step == "done":
                return "finished"
            clock.progressed()

    for _ in range(3):
        steps.put_nowait("progress")
    steps.put_nowait("done")
    assert await within(Deadline(5, True, 60), reporting) == "finished"

    never = asyncio.Event()

    async def silent(clock: Clock) -> None:
        await never.wait()

    with pytest.raises(DeadlineExceeded, match=r"0\.01 s"):
        await within(Deadline(0.01), silent)

    async def chatty(clock: Clock) -> None:
        while True:  # progress forever: only the overall maximum ends it
            clock.progressed()
            await asyncio.sleep(0)

    with pytest.raises(DeadlineExceeded, match=r"0\.05 s in all"):
        await within(Deadline(0.01, True, 0.05), chatty)

    async def client_timeout(clock: Clock) -> None:
        raise TimeoutError("the client's own")

    with pytest.raises(TimeoutError, match="the client's own"):
        await within(Deadline(5), client_timeout)

    async def asks_the_user(clock: Clock) -> str:
        with clock.paused(), clock.paused():  # a slow user: longer than the whole deadline
            await asyncio.sleep(0.1)
        return "answered"

    assert await within(Deadline(0.05), asks_the_user) == "answered"


def test_audit_lines(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "logs" / "audit.jsonl")
    first = start_audit(log, "desk", "returns", "create_return", "c1", {"b": 1, "a": [2]})
    first.decided("allow", "user")
    first.finished("ok")
    second = start_audit(log, None, "returns", "delete", "c2", {})
    second.decided("deny", "server")
    second.finished("denied")
    start_audit(None, None, "s", "t", "c3", {}).finished("ok")  # no log: nothing written
    (tmp_path / "logs" / "audit.jsonl").open("a").write("not json\n")
    records = list(read_audit(log.path))
    assert [(r["tool"], r["decision"], r["by"], r["outcome"]) for r in records] == [
        ("create_return", "allow", "user", "ok"),
        ("delete", "deny", "server", "denied"),
    ]
    assert records[0]["arguments"] == digest({"a": [2], "b": 1}) and "T" in records[0]["time"]
    assert records[0]["agent"] == "desk" and records[0]["duration_ms"] >= 0
    assert json.dumps(records[0]).count("create_return") == 1  # arguments are a digest only
    assert os.stat(log.path).st_mode & 0o777 == 0o600


@pytest.mark.parametrize("answer", ["s", "y", "n"])
async def test_terminal_consent_prompt_offers_this_session(answer: str, monkeypatch: Any) -> None:
    from rich.console import Console

    from mcpkit.host.terminal import TerminalUI

    console = Console(record=True, width=120)
    monkeypatch.setattr("rich.prompt.Prompt.ask", lambda *a, **k: answer)
    call = PendingCall("db__write", "db", "write", {}, {}, True)
    got = await TerminalUI(console).confirm(call)
    assert got == {"s": "session", "y": True, "n": False}[answer]


def test_cli_settings_default_to_the_state_directory(tmp_path: Path, monkeypatch: Any) -> None:
    from mcpkit.cli.runtime import host_settings

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    settings = host_settings(None, parse_config({"mcpServers": {}}))
    assert settings.pins == tmp_path / "mcpkit/tool-pins.json"
    assert settings.log == tmp_path / "mcpkit/host.log" and settings.audit is None
