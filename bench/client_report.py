"""Medians of the client-anchor rows of harness run JSONs, with the client CPU the harness table
leaves out, and mcpkit-client ÷ sdk-client ratios against the same (SDK) server.

    /tmp/venv-bench/bin/python /work/main/bench/client_report.py results/client-YYYYMMDD/run-*.json
"""

from __future__ import annotations

import json
import statistics
import sys
from typing import Any

FIELDS = (
    "rps",
    "p50_ms",
    "p99_ms",
    "client_cpu_s_per_1k",
    "client_cpu_util",
    "server_cpu_s_per_1k",
    "connect_ms",
)


def med(rs: list[dict[str, Any]], k: str) -> float | None:
    v = [r[k] for r in rs if r.get(k) is not None]
    return statistics.median(v) if v else None


def main(paths: list[str]) -> None:
    groups: dict[tuple[str, str, str, int], list[dict[str, Any]]] = {}
    raw: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for p in paths:
        with open(p) as f:
            data = json.load(f)
        for r in data["results"]:
            if r.get("op") != "tools/call:echo":
                continue
            if r.get("client") in (None, "raw", "httpx"):
                raw.setdefault((r["target"], r["era"], r["concurrency"]), []).append(r)
            else:
                groups.setdefault(
                    (r["target"], r.get("server", "?"), r["era"], r["concurrency"]), []
                ).append(r)

    f = lambda x, d=3: "-" if x is None else f"{x:,.{d}f}"  # noqa: E731
    print(f"runs: {len(paths)}; medians over runs; noise = (max-min)/median of calls/s\n")
    print(
        "| client | server | era | conc | calls/s | noise | p50 ms | p99 ms | client CPU ms/call "
        "| client CPU util | server CPU ms/call | connect ms | runs |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (client, server, era, c), rs in sorted(
        groups.items(), key=lambda kv: (kv[0][2], kv[0][3], kv[0][1], kv[0][0])
    ):
        v = [r["rps"] for r in rs if r.get("rps")]
        noise = f"{(max(v) - min(v)) / statistics.median(v):.0%}" if len(v) > 1 else "-"
        print(
            f"| {client} | {server} | {era} | {c} | {f(med(rs, 'rps'), 0)} | {noise} | {f(med(rs, 'p50_ms'))} "
            f"| {f(med(rs, 'p99_ms'))} | {f(med(rs, 'client_cpu_s_per_1k'))} | {f(med(rs, 'client_cpu_util'), 2)} "
            f"| {f(med(rs, 'server_cpu_s_per_1k'))} | {f(med(rs, 'connect_ms'), 0)} | {len(rs)} |"
        )
    if raw:
        print(
            "\nraw harness generator (mcpbench http1) against the same servers, same invocation:\n"
        )
        print("| server | era | conc | calls/s | p50 ms | p99 ms | server CPU ms/call | runs |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for (t, era, c), rs in sorted(raw.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0])):
            print(
                f"| {t} | {era} | {c} | {f(med(rs, 'rps'), 0)} | {f(med(rs, 'p50_ms'))} | {f(med(rs, 'p99_ms'))} "
                f"| {f(med(rs, 'server_cpu_s_per_1k'))} | {len(rs)} |"
            )

    # ratios against the same SDK server
    print("\nmcpkit client ÷ SDK client, both against the SDK server (ratio of medians):\n")
    print("| era | conc | calls/s ratio | p50 ratio | client CPU/call ratio (SDK ÷ mcpkit) |")
    print("|---|---:|---:|---:|---:|")
    for (client, server, era, c), rs in sorted(groups.items(), key=lambda kv: (kv[0][2], kv[0][3])):
        if server != "sdk" or client == "sdk-client":
            continue
        base = next(
            (
                g
                for (cl, sv, e, cc), g in groups.items()
                if cl == "sdk-client" and sv == "sdk" and e == era and cc == c
            ),
            None,
        )
        if not base:
            continue

        def ratio(a: float | None, b: float | None) -> str:
            return "-" if a is None or not b else f"{a / b:.2f}"

        print(
            f"| {era} | {c} | {ratio(med(rs, 'rps'), med(base, 'rps'))} "
            f"| {ratio(med(rs, 'p50_ms'), med(base, 'p50_ms'))} "
            f"| {ratio(med(base, 'client_cpu_s_per_1k'), med(rs, 'client_cpu_s_per_1k'))} |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
