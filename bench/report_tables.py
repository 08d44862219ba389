"""The tables of docs/performance.md that read one results file each (perf_report.py):
client pairings (harness aggregate), MRTR rounds (mrtr_bench.py), two instances
(two_instances.py). Medians over the repeats."""

from __future__ import annotations

import statistics
from typing import Any


def fmt(v: Any, nd: int = 0) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.{nd}f}"
    return str(v)


def med(rs: list[dict[str, Any]], k: str) -> float | None:
    v = [r[k] for r in rs if r.get(k) is not None]
    return statistics.median(v) if v else None


def client_table(agg: dict[Any, dict[str, Any]]) -> list[str]:
    lines = ["| client | server | era | conc | calls/s | p50 ms | p99 ms | client CPU util | server CPU ms/call |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    seen = False
    for k, v in agg.items():
        if k[3] == "cold_start" or k[5] == "raw":
            continue
        seen = True
        server = {"sdk-client": "sdk", "mcpkit-client": "mcpkit", "sdk-client-on-mcpkit": "mcpkit",
                  "mcpkit-client-on-sdk": "sdk"}.get(k[0], "?")
        lines.append(f"| {k[0]} | {server} | {k[2]} | {k[4]} | {fmt(v['rps'])} | {fmt(v['p50_ms'], 2)} "
                     f"| {fmt(v['p99_ms'], 2)} | {fmt(v['client_cpu_util'], 2)} | {fmt(v['server_cpu_s_per_1k'], 3)} |")
    return lines if seen else []


def mrtr_table(recs: list[dict[str, Any]]) -> list[str]:
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for r in recs:
        groups.setdefault((r["server"], r["concurrency"], r["op"]), []).append(r)
    if not groups:
        return []

    lines = ["| server | conc | op | units/s | p50 ms | p99 ms | server CPU ms/unit | errors | runs |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for (server, c, op), rs in sorted(groups.items()):
        lines.append(f"| {server} | {c} | {'MRTR round (2 POSTs)' if op == 'mrtr' else 'echo call'} "
                     f"| {fmt(med(rs, 'units_per_s'))} | {fmt(med(rs, 'p50_ms'), 2)} | {fmt(med(rs, 'p99_ms'), 2)} "
                     f"| {fmt(med(rs, 'server_cpu_ms_per_unit'), 3)} | {sum(r['errors'] for r in rs)} | {len(rs)} |")
    return lines


def two_table(recs: list[dict[str, Any]]) -> list[str]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in recs:
        groups.setdefault((r["setup"], r["op"]), []).append(r)
    if not groups:
        return []

    lines = ["| setup | op | conc | units/s | p50 ms | p99 ms | server CPU ms/unit (all instances) | errors | runs |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (setup, op), rs in sorted(groups.items()):
        label = "1 instance (CPU 0)" if setup == "one" else "2 instances (CPU 0 + CPU 1)"
        lines.append(f"| {label} | {op} | {rs[0]['concurrency']} | {fmt(med(rs, 'units_per_s'))} "
                     f"| {fmt(med(rs, 'p50_ms'), 2)} | {fmt(med(rs, 'p99_ms'), 2)} "
                     f"| {fmt(med(rs, 'server_cpu_ms_per_unit'), 3)} | {sum(r['errors'] for r in rs)} | {len(rs)} |")
    return lines
