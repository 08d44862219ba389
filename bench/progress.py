"""Progress of `make bench` on the terminal: `bench: scenario 7 of 58 (mcpkit stdio, run 1/3),
elapsed 4:12`. Standard library only (it runs under any of the bench venvs).

    progress.py plan --targets A.json --targets B.json --only x,y --transports http,stdio \
        --repeat 3 --extra 4          # prints N: the harness legs of every repeat + extra steps
    HARNESS 2>&1 | progress.py follow --total N --start EPOCH --log harness.log
                                      # copies the harness's stderr to the log; a line per leg
    progress.py step --n 55 --total N --start EPOCH "MRTR rounds"   # one line for a later step
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Iterable
from typing import TextIO

#: The harness's log lines (mcpbench/run.py): a repeat starts, a target leg starts.
RUN = re.compile(r"^\[[\d:]+\] run (\d+)/(\d+)$")
LEG = re.compile(r"^\[[\d:]+\] (\S+): (http|stdio|client anchor)$")


def plan(target_files: Iterable[str], only: list[str], transports: list[str], repeat: int) -> int:
    """How many legs the harness runs: each transport of each target, each client, per repeat."""
    targets: dict[str, dict[str, object]] = {}
    clients: set[str] = set()
    for path in target_files:
        with open(path) as f:
            data = json.load(f)
        targets.update(data.get("targets", {}))
        clients.update(data.get("clients", {}))
    legs = 0
    for name in only:
        if name in targets:
            legs += sum(1 for t in transports if targets[name].get(t))
        elif name in clients:
            legs += 1
    return legs * repeat


def elapsed(start: float) -> str:
    seconds = int(time.time() - start)
    return f"{seconds // 60}:{seconds % 60:02d}"


def say(n: int, total: int, what: str, start: float, out: TextIO) -> None:
    out.write(f"bench: scenario {n} of {total} ({what}), elapsed {elapsed(start)}\n")
    out.flush()


def follow(lines: Iterable[str], total: int, start: float, log: TextIO, out: TextIO) -> int:
    """Copy every line to `log`; one progress line on `out` per leg. Returns the legs seen."""
    n, run = 0, ""
    for line in lines:
        log.write(line)
        log.flush()
        text = line.rstrip("\n")
        if (m := RUN.match(text)) is not None:
            run = f", run {m.group(1)}/{m.group(2)}"
        elif (m := LEG.match(text)) is not None:
            n += 1
            say(n, total, f"{m.group(1)} {m.group(2)}{run}", start, out)
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--targets", action="append", default=[])
    p.add_argument("--only", required=True)
    p.add_argument("--transports", default="http,stdio")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--extra", type=int, default=0, help="steps after the harness")
    f = sub.add_parser("follow")
    f.add_argument("--total", type=int, required=True)
    f.add_argument("--start", type=float, default=time.time())
    f.add_argument("--log", required=True)
    s = sub.add_parser("step")
    s.add_argument("--n", type=int, required=True)
    s.add_argument("--total", type=int, required=True)
    s.add_argument("--start", type=float, default=time.time())
    s.add_argument("what")
    a = ap.parse_args(argv)
    if a.command == "plan":
        legs = plan(a.targets, a.only.split(","), a.transports.split(","), a.repeat)
        print(legs + a.extra)
    elif a.command == "follow":
        with open(a.log, "a") as log:
            follow(sys.stdin, a.total, a.start, log, sys.stderr)
    else:
        say(a.n, a.total, a.what, a.start, sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
