"""The scale curves of `make bench` (issue 27 item 7): the host's overhead is measured through
the public host API (a real `Host`, a `ScriptedModel`, a real stdio server process), so the
figure survives a rewrite of the host's call path; and the report's tables say what was
measured, "-" where a server has no figure, and the SDK ÷ mcpkit ratio of server CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support import ROOT, scaled

BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

import scale_report  # noqa: E402


def test_host_overhead_is_measured_through_the_public_host_api(tmp_path: Path) -> None:
    out = tmp_path / "host.json"
    subprocess.run(
        [sys.executable, str(BENCH / "host_bench.py"), "--calls", "20", "--rounds", "1",
         "--json", str(out)],
        check=True, capture_output=True, timeout=scaled(120),
    )  # fmt: skip
    figures = json.loads(out.read_text())
    assert figures["calls"] == 20
    assert figures["bare_wall_us"] > 0 and figures["host_wall_us"] > 0
    difference = figures["host_wall_us"] - figures["bare_wall_us"]
    assert abs(figures["overhead_wall_us"] - difference) < 0.15  # each figure rounded on its own


def test_tools_table_compares_server_cpu_and_marks_missing_figures() -> None:
    row = {"rps": 100.0, "p50_ms": 1.0, "reply_kib": 2.5, "requests": 50, "errors": 0,
           "ready_s": 0.5, "rss_mb": 40.0}  # fmt: skip
    rows = {
        ("mcpkit", "http", "tools/list", 1000): {**row, "server_cpu_ms": 0.5},
        ("sdk", "http", "tools/list", 1000): {**row, "server_cpu_ms": 100.0},
        ("mcpkit", "stdio", "tools/call:echo", 10): {
            **row,
            "server_cpu_ms": 0.1,
            "reply_kib": None,
        },
    }
    lines = scale_report.tools_table(rows)
    assert "| tools/list | http | 1,000 | 0.500 · 100.000 | 200.0\u00d7 |" in lines[2]
    echo = next(line for line in lines if line.startswith("| tools/call echo | stdio | 10 |"))
    assert "0.100 · - | - |" in echo  # no SDK figure: a dash, no ratio
    assert scale_report.startup_table(rows)[-1].startswith("| stdio | 10 | 0.50 · - |")


def test_overhead_table_subtracts_the_wrapped_call() -> None:
    gateway = {"micro": {"direct_us": 60.0, "forwarder_us": 100.0, "proxy_us": 160.0}, "runs": []}
    lines = scale_report.overhead_table(None, gateway)
    assert lines[2].endswith("| 60.0 | 160.0 | **100.0** |")
    assert lines[3].endswith("| 100.0 | 160.0 | **60.0** |")
    assert scale_report.overhead_table(None, None) == []


def test_make_bench_without_the_harness_stops_with_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    done = subprocess.run(
        ["bash", str(BENCH / "run_bench.sh")],
        env={**os.environ, "MCPBENCH_DIR": str(missing)},
        capture_output=True, text=True, timeout=scaled(30),
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"make bench: no harness at {missing}; set MCPBENCH_DIR to the shared bench folder"
    ]
