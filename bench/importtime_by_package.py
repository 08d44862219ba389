"""Aggregate `python -X importtime` self time by top-level package (median of N runs).

    python importtime_by_package.py [--python PY] [-n 5] "import mcpkit.server"
"""

from __future__ import annotations

import argparse
import collections
import statistics
import subprocess


def once(py: str, code: str) -> dict[str, float]:
    err = subprocess.run([py, "-X", "importtime", "-c", code], capture_output=True, text=True).stderr
    out: collections.Counter[str] = collections.Counter()
    for line in err.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, self_us, _cum, name = (p.strip() for p in line.split("|", 0)[0].replace("import time:", "").split("|")) if False else (None, *[p.strip() for p in line.replace("import time:", "").split("|")])
        mod = name.strip()
        top = mod.split(".")[0].lstrip("_") if not mod.startswith("mcpkit") else ".".join(mod.split(".")[:2])
        out[top] += int(self_us) / 1000
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default="/work/main/.venv/bin/python")
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("code")
    a = ap.parse_args()
    runs = [once(a.python, a.code) for _ in range(a.n)]
    keys = set().union(*runs)
    med = {k: statistics.median(r.get(k, 0.0) for r in runs) for k in keys}
    total = statistics.median(sum(r.values()) for r in runs)
    print(f"{a.code}: {total:.1f} ms total self time under -X importtime (median of {a.n}; inflated vs wall clock)")
    for k, v in sorted(med.items(), key=lambda kv: -kv[1])[: a.top]:
        print(f"  {v:6.1f} ms  {k}")


if __name__ == "__main__":
    main()
