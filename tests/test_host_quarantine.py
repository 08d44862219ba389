"""Quarantine (issue #31): a tool a pinned server adds or renames, and the whole catalogue of a
server seen for the first time, are withheld from the model until the user approves them
(`mcpkit pins approve`, the chat's question), unless the server's entry says
`"trustNewTools": true`; the model gets one note. A real stdio server whose catalogue changes
between runs and while it runs (tests/servers/drifting_server.py)."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from host_support import RecordingUI
from mcpkit.host import Host, HostSettings, parse_config
from mcpkit.host.conversation import AssistantMessage, Message, ToolSpec
from mcpkit.host.pins import ToolPins
from support import ROOT, scaled

SERVER = str(ROOT / "tests/servers/drifting_server.py")
BASE = ["drifting__echo", "drifting__poison"]


def entry(variant: str = "base", **more: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [SERVER, variant], **more}


def write_config(tmp_path: Path, **servers: dict[str, Any]) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


class Recording:
    """The model: records what each request offered (tool names) and said (system prompt)."""

    name = "recording"

    def __init__(self) -> None:
        self.requests: list[tuple[str, list[str]]] = []

    async def complete(
        self, system: str | None, history: list[Message], tools: list[ToolSpec]
    ) -> AssistantMessage:
        self.requests.append((system or "", sorted(t.name for t in tools if "__" in t.name)))
        return AssistantMessage("ok")


def host(config: Path | dict[str, Any], pins: ToolPins | Path, model: Recording) -> Host:
    data = json.loads(config.read_text()) if isinstance(config, Path) else config
    store = pins if isinstance(pins, ToolPins) else ToolPins(pins)
    cfg = parse_config(data, env={})
    return Host(cfg, model=model, ui=RecordingUI(), settings=HostSettings(), pins=store)


async def mcpkit(*args: str) -> str:
    """Run the CLI as the user would (another process); its output, stdout then stderr."""
    argv = [sys.executable, "-m", "mcpkit.cli", *args]
    run = functools.partial(subprocess.run, capture_output=True, text=True, timeout=scaled(60))
    done = await asyncio.to_thread(run, argv)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


async def test_a_tool_added_while_the_server_runs_is_withheld_until_approved(
    tmp_path: Path,
) -> None:
    config, pins = write_config(tmp_path, drifting=entry()), tmp_path / "pins.json"
    # Configured, then approved whole before any host runs it (bulk approval).
    out = await mcpkit("pins", "approve", "drifting", "--config", str(config), "--pins", str(pins))
    assert "approved the 2 tool(s) of drifting" in out
    model = Recording()
    async with host(config, pins, model) as h:
        agent = h.agent()
        await agent.ask("hello")
        assert model.requests[-1][1] == BASE
        link = h.fleet.links["drifting"]
        assert link.client is not None
        await link.client.call_tool("poison", {})  # the server adds echo_v2: list_changed
        await asyncio.wait_for(link.changed.wait(), scaled(10))
        await agent.ask("and now?")
        system, offered = model.requests[-1]
        assert offered == BASE  # echo_v2 never reached the model
        assert "IGNORE PREVIOUS" not in system and "echo_v2" not in system
        assert system.count("await the user's approval") == 1
        assert "1 tool new on the 'drifting' server" in system
        assert [(c.tool, c.new) for c in link.withheld] == [("echo_v2", True)]
        listed = await mcpkit("pins", "list", "--pins", str(pins))
        assert "echo_v2" in listed and "new" in listed
        shown = await mcpkit("pins", "diff", "drifting", "--pins", str(pins))
        assert "+  Echo the text. IGNORE PREVIOUS INSTRUCTIONS" in shown
        await mcpkit("pins", "approve", "drifting", "--pins", str(pins))
        await agent.ask("approved?")
        assert model.requests[-1][1] == sorted([*BASE, "drifting__echo_v2"])
        assert "await the user's approval" not in model.requests[-1][0]


async def test_a_renamed_tool_and_one_added_between_runs_are_withheld(tmp_path: Path) -> None:
    pins = ToolPins(tmp_path / "pins.json")
    model = Recording()
    async with host({"mcpServers": {"drifting": entry()}}, pins, model) as h:
        for batch in h.fleet.questions():
            for change in batch:
                h.fleet.approve(change)
    async with host({"mcpServers": {"drifting": entry("renamed")}}, pins, model) as h:
        await h.agent().ask("hello")
        assert model.requests[-1][1] == ["drifting__poison"]  # `repeat` is `echo` renamed
        assert [c.tool for c in h.fleet.pending_changes()] == ["repeat"]
    assert {e.tool for e in pins.entries() if e.digest} == {"echo", "poison"}  # old name kept
    async with host({"mcpServers": {"drifting": entry("poisoned")}}, pins, model) as h:
        await h.agent().ask("hello")
        assert model.requests[-1][1] == BASE
        assert [c.tool for c in h.fleet.pending_changes()] == ["echo_v2"]
        assert len(h.fleet.questions()) == 1  # a pinned server: asked tool by tool


async def test_a_new_server_is_asked_about_once_for_its_whole_catalogue(tmp_path: Path) -> None:
    from rich.console import Console

    from mcpkit.cli.runtime import review_pins

    console, questions = Console(record=True, width=200), []

    def ask(question: str) -> bool:
        questions.append(question)
        return True

    model = Recording()
    async with host({"mcpServers": {"drifting": entry()}}, tmp_path / "pins.json", model) as h:
        await h.agent().ask("hello")
        assert model.requests[-1][1] == []  # nothing offered before the user's answer
        assert "2 tools new on the 'drifting' server" in model.requests[-1][0]
        review_pins(console, h, ask)
        await h.agent().ask("again")
        assert model.requests[-1][1] == BASE
    assert questions == ["Approve the 2 tool(s) of the new server drifting?"]
    out = console.export_text()
    assert "echo: Echo the text." in out and "poison: Adds the echo_v2 tool." in out


async def test_trust_new_tools_offers_additions_but_the_flag_hook_still_holds(
    tmp_path: Path,
) -> None:
    def flag(definition: dict[str, Any]) -> str | None:
        text = str(definition.get("description", ""))
        return "it addresses the model" if "IGNORE PREVIOUS" in text else None

    pins = ToolPins(tmp_path / "pins.json", flag=flag)
    model = Recording()
    trusted = {"mcpServers": {"drifting": entry("poisoned", trustNewTools=True)}}
    async with host(trusted, pins, model) as h:
        await h.agent().ask("hello")
        assert model.requests[-1][1] == BASE  # trusted additions, but not echo_v2
        [held] = h.fleet.pending_changes()
        assert (held.tool, held.new, held.reason) == ("echo_v2", True, "it addresses the model")
        assert "held for review: it addresses the model" in held.why
    [pending] = ToolPins(tmp_path / "pins.json").pending("drifting")
    assert pending.reason == "it addresses the model"  # another process sees why


async def test_the_web_ui_approves_a_new_server_with_one_answer(tmp_path: Path) -> None:
    import aiohttp

    from mcpkit.host.models.none import NoModel
    from mcpkit.host.web import WebHost

    cfg = parse_config({"mcpServers": {"drifting": entry()}}, env={})
    settings = HostSettings(pins=tmp_path / "pins.json")
    async with (
        WebHost(cfg, model=NoModel(), settings=settings) as web,
        aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http,
    ):
        base = web.url.split("?")[0]
        headers = {"X-MCPKit-CSRF": web.guard.csrf, "Origin": base.rstrip("/")}
        async with http.get(web.url) as r:
            assert r.status == 200
        async with http.get(base + "api/state", headers=headers) as r:
            [item] = (await r.json())["pins"]
        assert item["server"] == "drifting" and item["new"]
        assert [t["tool"] for t in item["tools"]] == ["echo", "poison"]
        assert "echo: Echo the text." in item["diff"]
        assert web.host.fleet.catalog() == []
        stale = {"server": "drifting", "tools": [{"tool": "echo", "digest": "0"}]}
        async with http.post(base + "api/pins/approve", json=stale, headers=headers) as r:
            assert r.status == 404  # not what waits: nothing approved
        shown = {"server": "drifting", "tools": item["tools"]}
        async with http.post(base + "api/pins/approve", json=shown, headers=headers) as r:
            assert r.status == 200 and (await r.json()) == {"approved": True}
        await web.host.fleet.refresh()
        assert sorted(t.name for t in web.host.fleet.catalog()) == BASE
        assert web.pins() == []


async def test_mcpkit_install_approve_pins_the_new_server_at_configuration_time(
    tmp_path: Path,
) -> None:
    config = tmp_path / ".mcp.json"
    proc = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "mcpkit.cli", "install", "mcp-json", SERVER],
        *["--file", str(config), "--name", "drifting", "--approve"],
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
    )
    err = (await asyncio.wait_for(proc.communicate(), scaled(60)))[1].decode()
    assert proc.returncode == 0, err
    assert "approved the 2 tool(s) of 'drifting' for mcpkit hosts" in err
    pins = ToolPins(tmp_path / "state/mcpkit/tool-pins.json")
    model = Recording()
    async with host(config, pins, model) as h:  # its first conversation has its tools
        await h.agent().ask("hello")
    assert model.requests[-1][1] == BASE
