"""Re-read a profile.py raw stack file (py-spy --format raw) with mcpkit-aware categories.

profile.py charges /work/main/src/mcpkit/... frames to "other"; this splits them by module
and lists the mcpkit self-time hot spots (function:line), plus time by library.

    python mcpkit_breakdown.py results/profiles/profile-mcpkit-http-...txt.raw [--top 25]
"""

from __future__ import annotations

import argparse
import collections
import re
import sys

sys.path.insert(0, "/work/shared/bench")
from mcpbench.profile import categorize, parse_raw  # noqa: E402

_MCPKIT = re.compile(r"/mcpkit/(?P<mod>[\w/]+)\.py$")
_LINE = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?):(?P<line>\d+)\)$")


def lib(file: str) -> str:
    m = _MCPKIT.search(file)
    if m:
        return "mcpkit/" + m.group("mod")
    if file.endswith("bench_server.py"):
        return "bench_server.py"
    return categorize(file)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    samples = parse_raw(a.raw)
    total = sum(c for _, c in samples) or 1
    self_lib: collections.Counter[str] = collections.Counter()
    incl_lib: collections.Counter[str] = collections.Counter()
    self_mk: collections.Counter[str] = collections.Counter()
    incl_mk: collections.Counter[str] = collections.Counter()
    for frames, c in samples:
        real = [(fn, fl) for fn, fl in frames if fl]
        if not real:
            continue
        fn, fl = real[-1]
        L = lib(fl)
        self_lib["mcpkit (all)" if L.startswith("mcpkit/") else L] += c
        if L.startswith("mcpkit/"):
            self_mk[f"{fn} ({L})"] += c
        seen: set[str] = set()
        seen_l: set[str] = set()
        for fn2, fl2 in real:
            L2 = lib(fl2)
            key = "mcpkit (all)" if L2.startswith("mcpkit/") else L2
            if key not in seen_l:
                incl_lib[key] += c
                seen_l.add(key)
            if L2.startswith("mcpkit/"):
                k = f"{fn2} ({L2})"
                if k not in seen:
                    incl_mk[k] += c
                    seen.add(k)
    print(f"samples: {total}\n\n| library | self % | inside % |\n|---|---:|---:|")
    for k, c in self_lib.most_common():
        print(f"| {k} | {100 * c / total:.1f} | {100 * incl_lib[k] / total:.1f} |")
    print(f"\ntop {a.top} mcpkit self frames (function, module):")
    for k, c in self_mk.most_common(a.top):
        print(f"  {100 * c / total:5.1f}%  {k}")
    print(f"\ntop {a.top} mcpkit inclusive frames:")
    for k, c in incl_mk.most_common(a.top):
        print(f"  {100 * c / total:5.1f}%  {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
