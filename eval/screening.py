"""`make eval-screening`: how well the content checks hold poisoned tool definitions.

The labelled set (eval/screening.json: poisoned definitions written after published
tool-poisoning examples, and clean near misses) and the real catalogues of
`make eval-tools` (tests/data/tool_catalogues, every tool clean) go through
`mcpkit.host.screening.flag`, each tool with the other servers' tool names as `others` (as the
host passes them). Printed: precision and recall of "held for approval", the misses, every
false positive on the real catalogues (each one costs a user an approval), and the figures
of its two parts: `tune` (written with the rules, or tuned on after: thresholds are set on
it alone) and `held-out` (never tuned on: the honest figure for attacks worded otherwise), and
the cost of screening a real definition. `--model` adds the embedding signal
(`screening.semantic`, where the `search` extra is installed).

    .venv/bin/python eval/screening.py [--verbose] [--model]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from mcpkit.host.screening import flag
from mcpkit.host.screening.semantic import model_on

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "eval/screening.json"
CATALOGUES = ROOT / "tests/data/tool_catalogues"


def real_catalogues() -> dict[str, list[dict[str, Any]]]:
    return {
        path.stem: json.loads(path.read_text())["tools"]
        for path in sorted(CATALOGUES.glob("*.json"))
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verbose", action="store_true", help="print every held definition")
    parser.add_argument(
        "--model", action="store_true", help="add the embedding signal (the search extra)"
    )
    args = parser.parse_args()
    labelled = json.loads(LABELLED.read_text())
    rows: list[tuple[str, bool, str | None]] = []  # (id, poisoned, reason)
    parts: dict[str, list[tuple[str, bool, str | None]]] = {}
    for label in ("poisoned", "clean"):
        for item in labelled[label]:
            reason = flag(
                item["definition"],
                others=item.get("others", []),
                own=item.get("own", []),
                semantic=args.model,
            )
            row = (item["id"], label == "poisoned", reason)
            rows.append(row)
            parts.setdefault(_part(item), []).append(row)
    catalogues = real_catalogues()
    real_fp: list[tuple[str, str]] = []
    real_count = 0
    started = time.perf_counter()
    for server, tools in catalogues.items():
        others = [t["name"] for s, ts in catalogues.items() if s != server for t in ts]
        own = [t["name"] for t in tools]
        for tool in tools:
            real_count += 1
            reason = flag(tool, others=others, own=own, semantic=args.model)
            rows.append((f"{server}/{tool['name']}", False, reason))
            if reason is not None:
                real_fp.append((f"{server}/{tool['name']}", reason))
    cost = (time.perf_counter() - started) * 1000 / max(real_count, 1)
    signal = ("on" if model_on() else "model absent") if args.model else "off"
    precision, recall = scores(rows)
    fn = [(i, r) for i, bad, r in rows if bad and r is None]
    poisoned = sum(1 for _, bad, _ in rows if bad)
    print(
        f"labelled: {poisoned} poisoned, {len(rows) - poisoned} clean "
        f"({real_count} of them the real tools of {len(catalogues)} catalogues)"
    )
    if args.verbose:
        for i, bad, r in rows:
            if r is not None:
                print(f"  held {'(poisoned)' if bad else '(CLEAN)'} {i}: {r}")
    for i, _ in fn:
        print(f"  missed: {i}")
    for i, bad, r in rows:
        if not bad and r is not None and "/" not in i:
            print(f"  false positive (labelled clean): {i}: {r}")
    print(f"false positives on the real catalogues: {len(real_fp)} of {real_count} tools")
    print(f"cost: {cost:.1f} ms a real definition (embedding signal: {signal})")
    for i, r in real_fp:
        print(f"  {i}: {r}")
    for name, part in sorted(parts.items()):
        part_precision, part_recall = scores(part)
        held = sum(1 for _, bad, r in part if not bad and r is not None)
        print(
            f"{name} part ({len(part)} definitions): "
            f"precision {part_precision:.3f}  recall {part_recall:.3f}  clean held {held}"
        )
    print(f"precision {precision:.3f}  recall {recall:.3f}")


def _part(item: dict[str, Any]) -> str:
    """`held-out`: never tuned on; `real`: real tools the rules once held (clean, tuned on);
    `tune`: the rest (written with the rules, or tuned on after)."""
    return str(item["set"]) if item.get("set") in ("held-out", "real") else "tune"


def scores(rows: list[tuple[str, bool, str | None]]) -> tuple[float, float]:
    """Precision and recall of "held" against "poisoned"."""
    tp = sum(1 for _, bad, r in rows if bad and r is not None)
    fp = sum(1 for _, bad, r in rows if not bad and r is not None)
    poisoned = sum(1 for _, bad, _ in rows if bad)
    return (tp / (tp + fp) if tp + fp else 1.0), (tp / poisoned if poisoned else 1.0)


if __name__ == "__main__":
    main()
