"""`mcpkit tools` shows what the model would see, pins included (issues #30/#31): the tools a
host holds for approval (a definition changed since it was pinned, a new server's catalogue)
are listed after the catalogue as held, with why, never as visible; the pin file is read and
never written (nor created); once `mcpkit pins approve` pins them, they are listed as visible.
Real processes and real servers, as the operator runs them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from host_support import RecordingUI
from mcpkit.host.pins import ToolPins
from support import ROOT, scaled

WEATHER = {
    "command": sys.executable,
    "args": ["-m", "mcpkit", "run", str(ROOT / "examples/weather_server.py")],
}
DRIFTING = str(ROOT / "tests/servers/drifting_server.py")
OLD_FORECAST = {
    "name": "forecast",
    "description": "The forecast for a city (the definition first approved).",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def fleet(tmp_path: Path, pins: Path) -> Path:
    """`weather` (pinned, its tool changed since) and `fresh` (never seen: no pin at all)."""
    config = tmp_path / "fleet.json"
    host = {"pins": str(pins), "startupTimeout": scaled(60)}
    servers = {"weather": WEATHER, "fresh": WEATHER}
    config.write_text(json.dumps({"mcpServers": servers, "host": host}))
    return config


def a_host_held_the_change(config: Path, pins: Path) -> None:
    """The pin file as a host leaves it: `forecast` pinned in an older definition, and the
    definition the server sends now recorded as awaiting approval (the agent cannot use it)."""
    from mcpkit.host import ConsentPolicy, Fleet, load_config

    ToolPins(pins).pin("weather", [OLD_FORECAST])

    async def start() -> None:
        cfg = load_config(config)
        host = Fleet(cfg, RecordingUI(), ConsentPolicy(), pins=ToolPins(pins), servers=["weather"])
        try:
            await host.start(scaled(60))
            assert [c.tool for c in host.pending_changes()] == ["forecast"]
        finally:
            await host.close()

    asyncio.run(start())


def mcpkit(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "xdg-state")}
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=scaled(90),
        check=False,
    )


def tools_json(tmp_path: Path, config: Path, *flags: str) -> tuple[Any, str]:
    done = mcpkit(tmp_path, "tools", "--config", str(config), "--json", *flags)
    assert done.returncode == 0, done.stderr  # held tools alone are not an error
    return json.loads(done.stdout), done.stderr


def test_held_tools_are_listed_as_held_and_the_pin_file_is_untouched(tmp_path: Path) -> None:
    pins = tmp_path / "pins.json"
    config = fleet(tmp_path, pins)
    a_host_held_the_change(config, pins)
    before, stamp = pins.read_bytes(), pins.stat().st_mtime_ns

    listed, notes = tools_json(tmp_path, config)
    assert listed == []  # today's shape: the visible tools only, and none is visible
    assert "awaiting approval (2 tools the model does not see" in notes

    shown, _ = tools_json(tmp_path, config, "--held")
    assert shown["tools"] == []
    held = {(h["server"], h["tool"], h["why"]) for h in shown["awaitingApproval"]}
    assert held == {("weather", "forecast", "changed"), ("fresh", "forecast", "new-server")}
    approve = {h["server"]: h["approve"] for h in shown["awaitingApproval"]}
    assert approve["fresh"] == f"mcpkit pins approve fresh --config {config}"

    table = mcpkit(tmp_path, "tools", "--config", str(config))
    assert table.returncode == 0, table.stderr
    out = table.stdout
    assert "weather/forecast: changed since it was pinned" in out
    assert "fresh/forecast: new server: its catalogue awaits approval" in out
    assert f"mcpkit pins approve weather --config {config}" in out
    assert f"(or in the web UI's side panel: mcpkit ui --config {config})" in out
    assert "weather__forecast" not in out and "fresh__forecast" not in out
    assert "fresh: 0 tools, 1 awaiting approval" in table.stderr

    assert pins.read_bytes() == before and pins.stat().st_mtime_ns == stamp


def test_no_pin_file_is_created_where_none_existed(tmp_path: Path) -> None:
    pins = tmp_path / "state" / "pins.json"
    config = fleet(tmp_path, pins)
    listed, _ = tools_json(tmp_path, config)
    assert listed == []  # both servers are new: their tools wait for approval
    shown, _ = tools_json(tmp_path, config, "--held")
    assert {(h["server"], h["why"]) for h in shown["awaitingApproval"]} == {
        ("weather", "new-server"),
        ("fresh", "new-server"),
    }
    assert not pins.parent.exists()
    assert not (tmp_path / "xdg-state").exists()  # nor anything in the state directory


def test_after_pins_approve_the_held_tools_are_listed_as_visible(tmp_path: Path) -> None:
    pins = tmp_path / "pins.json"
    config = fleet(tmp_path, pins)
    a_host_held_the_change(config, pins)
    listed, _ = tools_json(tmp_path, config)
    assert listed == []  # held until approved

    for server in ("weather", "fresh"):  # a recorded change, then a server never seen
        done = mcpkit(tmp_path, "pins", "approve", server, "--config", str(config))
        assert done.returncode == 0, done.stderr

    shown, notes = tools_json(tmp_path, config, "--held")
    assert [t["name"] for t in shown["tools"]] == ["fresh__forecast", "weather__forecast"]
    assert shown["awaitingApproval"] == []
    assert "awaiting approval" not in notes
    listed, _ = tools_json(tmp_path, config)
    assert [t["name"] for t in listed] == ["fresh__forecast", "weather__forecast"]


def drifting(variant: str, **options: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [DRIFTING, variant], **options}


def test_added_renamed_and_flagged_tools_wait_with_why(tmp_path: Path) -> None:
    pins, config = tmp_path / "pins.json", tmp_path / "fleet.json"

    def write(added: dict[str, Any], renamed: dict[str, Any]) -> None:
        host = {"pins": str(pins), "startupTimeout": scaled(60)}
        servers = {"added": added, "renamed": renamed}
        config.write_text(json.dumps({"mcpServers": servers, "host": host}))

    write(drifting("base"), drifting("base"))
    for server in ("added", "renamed"):  # approved as configured: echo and poison pinned
        done = mcpkit(tmp_path, "pins", "approve", server, "--config", str(config))
        assert done.returncode == 0, done.stderr
    # Then one adds echo_v2 (its description flagged: held though its additions are
    # trusted), and the other renames echo to repeat (a new tool: held).
    write(drifting("poisoned", trustNewTools=True), drifting("renamed"))
    before, stamp = pins.read_bytes(), pins.stat().st_mtime_ns

    table = mcpkit(tmp_path, "tools", "--config", str(config))
    assert table.returncode == 0, table.stderr
    flagged = (
        "added/echo_v2: new on its server (added, or renamed); flagged by the content checks: "
    )
    assert flagged in table.stdout
    assert "renamed/repeat: new on its server (added, or renamed)\n" in table.stdout
    shown, _ = tools_json(tmp_path, config, "--held")
    assert [t["name"] for t in shown["tools"]] == [
        "added__echo",
        "added__poison",
        "renamed__poison",
    ]
    held = {
        (h["server"], h["tool"], h["why"], bool(h["flagged"])) for h in shown["awaitingApproval"]
    }
    assert held == {
        ("added", "echo_v2", "new-tool", True),
        ("renamed", "repeat", "new-tool", False),
    }
    assert pins.read_bytes() == before and pins.stat().st_mtime_ns == stamp


def test_a_change_only_mcpkit_tools_saw_is_recorded_by_approve_for_review(tmp_path: Path) -> None:
    # `mcpkit tools` records nothing, so `mcpkit pins approve` first records what it holds
    # (never approving a definition nobody was shown), and approves it when asked again.
    pins = tmp_path / "pins.json"
    config = fleet(tmp_path, pins)
    ToolPins(pins).pin("weather", [OLD_FORECAST])
    shown, _ = tools_json(tmp_path, config, "--held", "-s", "weather")
    assert [(h["tool"], h["why"]) for h in shown["awaitingApproval"]] == [("forecast", "changed")]

    approve = ("pins", "approve", "weather", "--config", str(config))
    first = mcpkit(tmp_path, *approve)
    assert first.returncode == 1
    assert "weather has changes no host had recorded yet, recorded now; review them" in first.stderr
    diff = mcpkit(tmp_path, "pins", "diff", "weather", "--config", str(config))
    assert "weather/forecast (pinned)" in diff.stdout, diff.stderr
    again = mcpkit(tmp_path, *approve)
    assert again.returncode == 0, again.stderr
    listed, _ = tools_json(tmp_path, config, "-s", "weather")
    assert [t["name"] for t in listed] == ["weather__forecast"]
