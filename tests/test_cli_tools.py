"""`mcpkit tools --config` over a fleet with a server down, one that never answers and one that
writes noise, run as the user runs it (a real process, real servers): a line per server on
stderr while they start, `host.startupTimeout` bounding the wait, failures said as failures
with their reason, and stdout left to the catalogue (`--json` parses whatever happens)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from support import ROOT, scaled

# Trusted to add tools: offered on first sight (test_cli_tools_pins.py: the held ones).
WEATHER = {
    "command": sys.executable,
    "args": ["-m", "mcpkit", "run", str(ROOT / "examples/weather_server.py")],
    "trustNewTools": True,
}
DEAD = {
    "command": sys.executable,
    "args": ["-c", "import sys; sys.exit('cannot open the database')"],
}
# Reads its input and never answers (a server stuck before `initialize`, e.g. installing).
HUNG = {"command": sys.executable, "args": ["-c", "import sys; sys.stdin.read()"], "timeout": 30}
NOISY = {
    "command": sys.executable,
    "args": [str(ROOT / "tests/servers/northwind_faults.py"), "noisy"],
    "trustNewTools": True,
}


def tools(
    tmp_path: Path, servers: dict[str, Any], startup: float
) -> tuple[subprocess.CompletedProcess[str], float]:
    config = tmp_path / "fleet.json"
    host = {"startupTimeout": startup, "pins": str(tmp_path / "pins.json")}
    config.write_text(json.dumps({"mcpServers": servers, "host": host}))
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "tools", "--config", str(config), "--json"],
        capture_output=True,
        text=True,
        timeout=scaled(90),
        check=False,
    )
    return done, time.monotonic() - began


def test_json_stays_valid_with_a_dead_server_which_is_reported_with_its_reason(
    tmp_path: Path,
) -> None:
    done, _ = tools(tmp_path, {"weather": WEATHER, "dead": DEAD}, scaled(60))
    assert done.returncode == 1, done.stderr  # a script sees a server missing

    listed = json.loads(done.stdout)  # nothing but the catalogue on stdout
    assert [(t["server"], t["tool"]) for t in listed] == [("weather", "forecast")]
    lines = done.stderr.splitlines()
    assert lines[0].startswith("starting 2 server(s)")  # on screen at once, not after the wait
    failed = [line for line in lines if line.startswith("dead: failed: ")]
    assert len(failed) == 1 and "cannot open the database" in failed[0], done.stderr
    assert any(line.startswith("weather: 1 tool (") for line in lines), done.stderr
    assert lines[-1] == "1 tool from 1 of 2 servers"
    assert "still starting" not in done.stderr


@pytest.mark.timing
def test_the_startup_timeout_bounds_the_wait(tmp_path: Path) -> None:
    done, took = tools(tmp_path, {"hung": HUNG}, 2)
    # It waited for the server as long as it was told, and not for the server's own 30 s.
    assert 2 <= took < 2 + scaled(10), took
    assert done.returncode == 1, done.stderr  # not listed: as missing as a failed one
    assert json.loads(done.stdout) == []
    assert "hung: no answer within 2 s (host.startupTimeout)" in done.stderr


def test_a_noise_line_names_its_server(tmp_path: Path) -> None:
    done, _ = tools(tmp_path, {"noisy": NOISY}, scaled(60))
    assert done.returncode == 0, done.stderr
    assert {t["server"] for t in json.loads(done.stdout)} == {"noisy"}
    assert "server 'noisy': ignoring an invalid line on its stdout" in done.stderr
