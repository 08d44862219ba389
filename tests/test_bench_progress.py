"""`make bench` prints its progress: a tiny dry configuration (one target on both transports and
one client, one repeat) through bench/progress.py, with a stand-in for the harness that writes
the harness's log lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support import ROOT

PROGRESS = str(ROOT / "bench/progress.py")
HARNESS_LINES = [
    "[10:00:00] run 1/1",
    "[10:00:00] tiny: http",
    "[10:00:01]   tiny           http  modern tools/call:echo c=1   900 rps",
    "[10:00:02] tiny: stdio",
    "[10:00:03] tiny-client: client anchor",
    "[10:00:04] wrote run.json",
]


def test_progress_lines_for_a_tiny_configuration(tmp_path: Path) -> None:
    targets = tmp_path / "targets.json"
    targets.write_text(
        json.dumps(
            {
                "targets": {"tiny": {"http": {"cmd": ["x"]}, "stdio": {"cmd": ["x"]}}},
                "clients": {"tiny-client": {"server": "tiny", "cmd": ["x"]}},
            }
        )
    )
    plan = subprocess.run(
        [sys.executable, PROGRESS, "plan", "--targets", str(targets), "--only", "tiny,tiny-client",
         "--transports", "http,stdio", "--repeat", "1", "--extra", "4"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    total = int(plan.stdout)
    assert total == 3 + 4
    harness = tmp_path / "harness.py"
    harness.write_text(
        f"import sys\nfor line in {HARNESS_LINES!r}:\n    print(line, file=sys.stderr)\n"
    )
    log = tmp_path / "harness.log"
    pipeline = (
        f"{sys.executable} {harness} 2>&1 >/dev/null | "
        f"{sys.executable} {PROGRESS} follow --total {total} --log {log} && "
        f"{sys.executable} {PROGRESS} step --n 4 --total {total} 'MRTR rounds'"
    )
    done = subprocess.run(["bash", "-c", pipeline], capture_output=True, text=True, check=True)
    lines = done.stderr.splitlines()
    assert [line.rsplit(", elapsed ", 1)[0] for line in lines] == [
        "bench: scenario 1 of 7 (tiny http, run 1/1)",
        "bench: scenario 2 of 7 (tiny stdio, run 1/1)",
        "bench: scenario 3 of 7 (tiny-client client anchor, run 1/1)",
        "bench: scenario 4 of 7 (MRTR rounds)",
    ]
    assert all(line.rsplit(", elapsed ", 1)[1] == "0:00" for line in lines)
    assert log.read_text().splitlines() == HARNESS_LINES  # the full log is kept
