"""Wall-clock import cost: median over N fresh interpreters of `python -c "import X"` minus `python -c pass`.

    python import_time.py [--python /work/main/.venv/bin/python] [-n 10] mcpkit mcpkit.server ...
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time


def wall(py: str, code: str, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run([py, "-c", code], check=True)
        out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default="/work/main/.venv/bin/python")
    ap.add_argument("-n", type=int, default=10)
    ap.add_argument("--json", help="also write the figures as JSON here")
    ap.add_argument("modules", nargs="+")
    a = ap.parse_args()
    out: dict[str, dict[str, float]] = {}
    wall(a.python, "pass", 2)  # warm the page cache
    base = statistics.median(wall(a.python, "pass", a.n))
    print(f"python -c pass: {base:.1f} ms (median of {a.n})")
    for mod in a.modules:
        code = mod if mod.startswith(("from ", "import ")) else f"import {mod}"
        wall(a.python, code, 1)
        m = statistics.median(wall(a.python, code, a.n))
        print(f"{code}: {m:.1f} ms total, {m - base:.1f} ms over bare python (median of {a.n})")
        out[code] = {"total_ms": round(m, 1), "over_bare_ms": round(m - base, 1)}
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"python_pass_ms": round(base, 1), "n": a.n, "imports": out}, f, indent=1)


if __name__ == "__main__":
    main()
