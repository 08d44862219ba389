"""Server links under supervision, over a real stdio server: degraded and back, a deadline that
cancels on the wire (CANC-05), reconnecting on request, and quiet retries while a server stays
down."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from host_support import SERVERS, RecordingUI, child_pids, northwind_http
from mcpkit.client.inputs import Elicitation
from mcpkit.host import ConfigError, Host, HostSettings, LinkState, parse_config
from mcpkit.host.backoff import Backoff
from mcpkit.host.conversation import AssistantMessage, Message, ToolCall, ToolResults, ToolSpec
from mcpkit.host.models.scripted import ScriptedModel
from support import scaled

pytestmark = pytest.mark.timing

BASIC = {"command": sys.executable, "args": [str(SERVERS / "basic_server.py")], "trusted": True}


def calls(*names: str) -> list[object]:
    def step(n: int, name: str) -> object:
        return lambda h, t: AssistantMessage("", [ToolCall(f"c{n}", name, {})])

    return [step(n, name) for n, name in enumerate(names)]


def last_results(history: list[Message]) -> list[str]:
    results = history[-1]
    assert isinstance(results, ToolResults)
    return [" ".join(b.get("text", "") for b in r.content) for r in results.results]


async def test_a_deadline_degrades_the_link_and_cancels_on_the_wire(tmp_path: Path) -> None:
    cfg = parse_config({"mcpServers": {"basic": {**BASIC, "timeouts": {"slow": 0.2}}}})
    ui = RecordingUI()
    seen: list[list[str]] = []

    def record(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        seen.append(last_results(history))
        return AssistantMessage("", [ToolCall("c1", "basic__echo", {"text": "still here"})])

    model = ScriptedModel(
        [
            lambda h, t: AssistantMessage("", [ToolCall("c0", "basic__slow", {})]),
            record,
            lambda h, t: AssistantMessage("done"),
        ]
    )
    settings = HostSettings(log=tmp_path / "host.log")
    async with Host(cfg, model=model, ui=ui, settings=settings) as host:
        await host.agent().ask("go")
        assert host.fleet.links["basic"].state is LinkState.READY
    assert "no answer within its deadline (0.2 s)" in seen[0][0]
    assert "may or may not have taken effect" in seen[0][0]  # not annotated read-only
    assert ui.of("state") == [("basic", "degraded"), ("basic", "ready")]
    # The stdio server heard notifications/cancelled (CANC-05) and said so on stderr,
    # which went to the log file.
    assert "slow: cancelled" in (tmp_path / "host.log").read_text()


async def test_reconnect_on_request_and_quiet_retries_while_down(tmp_path: Path) -> None:
    missing = {"command": str(tmp_path / "no-such-server")}
    cfg = parse_config({"mcpServers": {"basic": BASIC, "missing": missing}})
    ui = RecordingUI()
    fast = HostSettings(restart=Backoff(initial=0.01, factor=2, cap=0.02, jitter=0))
    async with Host(cfg, model=ScriptedModel([]), ui=ui, settings=fast) as host:
        basic, down = host.fleet.links["basic"], host.fleet.links["missing"]
        assert down.state is LinkState.DOWN and down.retry_in is not None
        for _ in range(3):  # it keeps trying, and says so only once
            await down.until(LinkState.CONNECTING)
            await down.until(LinkState.DOWN)
            assert down.state is not LinkState.READY
        first = basic.client
        await host.fleet.reconnect("basic")
        assert basic.state is LinkState.READY and basic.client is not first
        assert {"basic__echo", "basic__slow"} <= {t.name for t in host.fleet.catalog()}
        assert "'missing' server is unavailable" in host.fleet.notes()[0]
    assert ("missing", "down") not in ui.of("state")  # reported at start-up, not per retry
    assert any("'missing' is unavailable" in w and "cannot start" in w for w in ui.of("warn"))
    assert ui.of("state") == [("basic", "down"), ("basic", "ready")]  # the requested reconnect


class SlowUser(RecordingUI):
    async def elicit(self, server: str, request: Elicitation) -> dict[str, Any]:
        await asyncio.sleep(0.5)  # the user reads the form: longer than the call's deadline
        return await super().elicit(server, request)


async def test_the_deadline_waits_while_the_user_answers_the_server() -> None:
    seen: list[list[str]] = []

    def record(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        seen.append(last_results(history))
        return AssistantMessage("done")

    args = {"order_id": "ORD-7", "reason": "cracked"}
    model = ScriptedModel(
        [
            lambda h, t: AssistantMessage("", [ToolCall("c0", "returns__create_return", args)]),
            record,
        ]
    )
    async with northwind_http() as env:
        entry = {
            "type": "http",
            "url": f"http://127.0.0.1:{env['RETURNS_PORT']}/mcp",
            "headers": {"Authorization": "Bearer tok-c1001"},
            "timeouts": {"create_return": 0.25},
        }
        cfg = parse_config({"mcpServers": {"returns": entry}})
        ui = SlowUser(answers={"create_return": True})
        async with Host(cfg, model=model, ui=ui) as host:
            await host.agent().ask("Return ORD-7.")
    assert '"created"' in seen[0][0] and ui.of("elicit") == ["returns"]


async def test_a_task_past_its_deadline_is_cancelled_with_tasks_cancel() -> None:
    seen: list[list[str]] = []

    def record(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        seen.append(last_results(history))
        return AssistantMessage("", [ToolCall("c1", "tasks__was_cancelled", {})])

    def done(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        seen.append(last_results(history))
        return AssistantMessage("done")

    model = ScriptedModel(
        [lambda h, t: AssistantMessage("", [ToolCall("c0", "tasks__rebuild", {})]), record, done]
    )
    entry = {
        "command": sys.executable,
        "args": [str(SERVERS / "task_hang_server.py")],
        "trusted": True,
        "timeouts": {"rebuild": 0.3},
    }
    cfg = parse_config({"mcpServers": {"tasks": entry}})
    async with Host(cfg, model=model, ui=RecordingUI(answers={"rebuild": True})) as host:
        await host.agent().ask("Rebuild.")
    assert "no answer within its deadline (0.3 s)" in seen[0][0]
    assert seen[1] == ["true"]  # the task was cancelled on the server (TASK-14)


async def test_a_legacy_server_without_a_change_stream_is_watched_and_restarted() -> None:
    script = str(SERVERS / "legacy_line_server.py")
    cfg = parse_config({"mcpServers": {"plain": {"command": sys.executable, "args": [script]}}})
    fast = HostSettings(restart=Backoff(initial=0.01, factor=2, cap=0.02, jitter=0))
    async with Host(cfg, model=ScriptedModel([]), ui=RecordingUI(), settings=fast) as host:
        link = host.fleet.links["plain"]
        assert link.state is LinkState.READY and link.client is not None
        assert link.client.era == "legacy"
        (pid,) = child_pids(script)
        os.kill(pid, signal.SIGKILL)
        await link.until(LinkState.DOWN)
        assert link.detail is not None and "exited" in link.detail
        await link.until(LinkState.READY)
        assert child_pids(script) != [pid]
        await host.fleet.refresh()
        assert [t.name for t in host.fleet.catalog()] == ["plain__ping"]


async def test_a_server_that_failed_is_reported_failed_not_still_starting() -> None:
    # issue 26: a server that had failed and was trying again when the start-up wait ended
    # was announced as "still starting; its tools join when ready".
    from mcpkit.host import ConsentPolicy, Fleet

    dead = {"command": sys.executable, "args": ["-c", "import sys; sys.exit('no database')"]}
    hung = {"command": sys.executable, "args": ["-c", "import sys; sys.stdin.read()"]}
    cfg = parse_config({"mcpServers": {"dead": dead, "hung": hung}})
    ui = RecordingUI()
    # Reconnecting at once: when the wait ends, "dead" is most likely starting again.
    fleet = Fleet(cfg, ui, ConsentPolicy(), restart=Backoff(0.01, 1, 0.01, 0))
    try:
        await fleet.start(startup_timeout=scaled(3))
        assert fleet.links["dead"].tried
    finally:
        await fleet.close()
    (warning,) = [w for w in ui.of("warn") if "'dead'" in w]
    assert "unavailable: the server process exited with code 1: no database" in warning
    assert ui.of("info") == ["server 'hung' is still starting; its tools join when ready"]


async def test_a_server_slower_to_start_than_its_timeout_connects_once(tmp_path: Path) -> None:
    # Issue 26.2: start-up (spawn to first list) has its own deadline, `startTimeout`
    # (default max(timeout, 30)); `timeout` bounds each request only. Before, the whole start
    # ran under `timeout` and such a server was restarted for ever, a new process each time.
    starts = tmp_path / "starts"
    args = [str(SERVERS / "slow_server.py"), "modern", "3", f"--starts={starts}"]
    cfg = parse_config(
        {"mcpServers": {"slow": {"command": sys.executable, "args": args, "timeout": 2}}}
    )
    fast = HostSettings(startup_timeout=0, restart=Backoff(initial=0.01, cap=0.02, jitter=0))
    async with Host(cfg, model=ScriptedModel([]), ui=RecordingUI(), settings=fast) as host:
        link = host.fleet.links["slow"]
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(scaled(30)):
                await link.until(LinkState.READY)
        started = len(starts.read_text().splitlines())
        assert link.state is LinkState.READY, f"{link.state} ({link.detail}), started {started}x"
        assert [t.name for t in link.tools] == ["echo"]
        assert started == 1  # one process, never restarted


async def test_start_timeout_bounds_the_start(tmp_path: Path) -> None:
    args = [str(SERVERS / "slow_server.py"), "modern", "30"]
    entry = {"command": sys.executable, "args": args, "startTimeout": 0.5}
    quick, long = {**entry, "startTimeout": None, "timeout": 2}, {**entry, "timeout": 90}
    cfg = parse_config({"mcpServers": {"slow": entry, "quick": quick, "long": long}})
    assert cfg.servers["slow"].start_deadline == 0.5
    assert [cfg.servers[n].start_deadline for n in ("quick", "long")] == [30, 0.5]
    del long["startTimeout"]
    assert parse_config({"mcpServers": {"long": long}}).servers["long"].start_deadline == 90
    async with Host(cfg, model=ScriptedModel([]), ui=RecordingUI(), servers=["slow"]) as host:
        link = host.fleet.links["slow"]
        async with asyncio.timeout(scaled(10)):
            await link.until(LinkState.DOWN)
        assert link.detail == "not started within 0.5 s (startTimeout)"
    with pytest.raises(ConfigError, match='"startTimeout" must be a positive number of seconds'):
        parse_config({"mcpServers": {"slow": {**entry, "startTimeout": 0}}})


async def test_a_restarting_servers_tools_say_when_to_try_again(tmp_path: Path) -> None:
    # Issue 26.2: while a server that was up restarts, its tools stay known to the model, and
    # a call answers when to try again instead of "There is no tool named ...".
    script = tmp_path / "basic_server.py"
    shutil.copy(SERVERS / "basic_server.py", script)
    cfg = parse_config({"mcpServers": {"basic": {**BASIC, "args": [str(script)]}}})
    # Restarts at once, then after 1 s, then after a minute (initial * factor ** n).
    backoff = Backoff(initial=0.0001, factor=10_000, cap=scaled(60), jitter=0)
    seen: list[tuple[list[str], list[str]]] = []

    def call(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return AssistantMessage("", [ToolCall("c0", "basic__echo", {"text": "hi"})])

    def record(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        seen.append(([t.name for t in tools], last_results(history)))
        return AssistantMessage("done")

    model = ScriptedModel([call, record])
    settings = HostSettings(restart=backoff)
    async with Host(cfg, model=model, ui=RecordingUI(), settings=settings) as host:
        link = host.fleet.links["basic"]
        (pid,) = child_pids(str(script))
        script.rename(tmp_path / "parked.py")  # restarts fail until it is back
        os.kill(pid, signal.SIGKILL)
        async with asyncio.timeout(scaled(20)):
            await link.until(LinkState.DOWN)
            for _ in range(2):  # two restarts fail; the third waits a minute
                await link.until(LinkState.CONNECTING)
                await link.until(LinkState.DOWN)
        await host.agent().ask("Echo hi.")
        notes = host.fleet.notes()
    ((offered, (answer,)),) = seen
    assert "basic__echo" in offered
    match = re.fullmatch(
        r"The 'basic' server is restarting \(attempt 3\); try again in (\d+) s\.", answer
    )
    assert match is not None, answer
    assert 30 < int(match[1]) <= scaled(60) + 30
    assert notes == [
        "The 'basic' server is restarting; calls to its tools fail until it is back "
        "(each says when to try again)."
    ]
