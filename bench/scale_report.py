"""The "Scale curves" section of docs/performance.md and its plot, docs/performance-scale.png
(called by perf_report.py; runs on the generator venv, imports no MCP library).

Reads, in one `make bench` results folder: scale-tools.json (scale_tools.py: tools/call echo and
tools/list at N registered tools, c=1, mcpkit and the SDK), listeners-small.json and
listeners.json (listeners.py at 1,000 and 10,000 streams), host.json (host_bench.py) and
gateway.json (gateway_bench.py --micro --json). A part that is missing is left out.
"""

from __future__ import annotations

import json
import os
from typing import Any

from report_tables import fmt

SERVERS = ("mcpkit", "sdk")
OPS = (("tools/list", "tools/list"), ("tools/call:echo", "tools/call echo"))
COLORS = {"mcpkit": "#2b7bba", "sdk": "#999999", "sdk-raised": "#cccccc"}
PNG = "performance-scale.png"


def _json(path: str) -> Any:
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def tool_rows(results: str) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    """(server, transport, op, tools) -> the row scale_tools.py measured."""
    data = _json(os.path.join(results, "scale-tools.json")) or {}
    return {(r["server"], r["transport"], r["op"], r["tools"]): r for r in data.get("results", [])}


def tools_table(rows: dict[tuple[str, str, str, int], dict[str, Any]]) -> list[str]:
    sizes = sorted({k[3] for k in rows})
    lines = ["| op | transport | tools | server CPU ms/req mcpkit · SDK | SDK ÷ mcpkit | req/s mcpkit · SDK "
             "| p50 ms mcpkit · SDK | reply KiB mcpkit · SDK | requests | errors |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for op, label in OPS:
        for tr in ("http", "stdio"):
            for n in sizes:
                mk, sdk = rows.get(("mcpkit", tr, op, n)) or {}, rows.get(("sdk", tr, op, n)) or {}
                if not (mk or sdk):
                    continue
                a, b = mk.get("server_cpu_ms"), sdk.get("server_cpu_ms")
                lines.append(
                    f"| {label} | {tr} | {n:,} | {fmt(a, 3)} · {fmt(b, 3)} | {fmt(b / a, 1) + '×' if a and b else '-'} "
                    f"| {fmt(mk.get('rps'))} · {fmt(sdk.get('rps'))} | {fmt(mk.get('p50_ms'), 2)} · "
                    f"{fmt(sdk.get('p50_ms'), 2)} | {fmt(mk.get('reply_kib'), 1)} · {fmt(sdk.get('reply_kib'), 1)} "
                    f"| {mk.get('requests', '-')} · {sdk.get('requests', '-')} "
                    f"| {mk.get('errors', 0) + sdk.get('errors', 0)} |")
    return lines


def startup_table(rows: dict[tuple[str, str, str, int], dict[str, Any]]) -> list[str]:
    """Spawn to the first full tools/list, and RSS after the ops, per size."""
    lines = ["| transport | tools | spawn → first tools/list s, mcpkit · SDK | RSS MB, mcpkit · SDK |",
             "|---|---:|---:|---:|"]
    for tr in ("http", "stdio"):
        for n in sorted({k[3] for k in rows}):
            mk, sdk = ({**rows.get((server, tr, OPS[1][0], n), {}), **rows.get((server, tr, OPS[0][0], n), {})}
                       for server in SERVERS)
            if mk or sdk:
                lines.append(f"| {tr} | {n:,} | {fmt(mk.get('ready_s'), 2)} · {fmt(sdk.get('ready_s'), 2)} "
                             f"| {fmt(mk.get('rss_mb'), 1)} · {fmt(sdk.get('rss_mb'), 1)} |")
    return lines


def listen_runs(results: str) -> list[dict[str, Any]]:
    """Every listeners.py result row, each with its stream count."""
    out = []
    for name in ("listeners-small.json", "listeners.json"):
        data = _json(os.path.join(results, name))
        for r in (data or {}).get("results", []):
            out.append({**r, "streams": data["streams"]})
    return sorted(out, key=lambda r: (r["streams"], r["server"]))


def listen_table(runs: list[dict[str, Any]]) -> list[str]:
    lines = ["| streams | server | open | refused | RSS per stream KiB | fan-out p50 ms | fan-out p100 ms | notified |",
             "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        lines.append(f"| {r['streams']:,} | {r['server']} | {r['opened']:,} | {r['refused']:,} | "
                     f"{r['rss_per_stream_kib']} | {r['fanout_p50_ms']} | {r['fanout_p100_ms']} | {r['notified']:,} |")
    return lines


def overhead_table(host: dict[str, Any] | None, gateway: dict[str, Any] | None) -> list[str]:
    lines = ["| what | the call it wraps | wrapped | overhead |", "|---|---:|---:|---:|"]
    if host:
        lines.append(f"| host: one agent turn (scripted model: call `echo`, answer), stdio server, wall µs "
                     f"| {host['bare_wall_us']} | {host['host_wall_us']} | **{host['overhead_wall_us']}** |")
        lines.append(f"| host: the same, CPU µs of the host process | {host['bare_cpu_us']} | "
                     f"{host['host_cpu_us']} | **{host['overhead_cpu_us']}** |")
    micro = (gateway or {}).get("micro")
    if micro:
        lines.append(f"| gateway `proxy()`, in process (memory transport), µs per call, vs a direct call "
                     f"| {micro['direct_us']} | {micro['proxy_us']} | **{round(micro['proxy_us'] - micro['direct_us'], 1)}** |")
        lines.append(f"| gateway `proxy()` vs a hand-written forwarding tool (the bare extra hop), µs "
                     f"| {micro['forwarder_us']} | {micro['proxy_us']} | **{round(micro['proxy_us'] - micro['forwarder_us'], 1)}** |")
    for r in (gateway or {}).get("runs", []):
        lines.append(f"| gateway over {r['transport']}, c={r['concurrency']}: server CPU ms per call "
                     f"(proxy + backend vs backend) | {r['direct_cpu_ms']} | {r['proxied_cpu_ms']} | "
                     f"**{r['overhead_cpu_ms']}** |")
    return lines if len(lines) > 2 else []


def plot(rows: dict[tuple[str, str, str, int], dict[str, Any]], listen: list[dict[str, Any]],
         host: dict[str, Any] | None, gateway: dict[str, Any] | None, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(18, 4.6))
    for ax, (op, label) in zip(axes[:2], OPS):
        for server in SERVERS:
            for tr, style in (("http", "-o"), ("stdio", "--s")):
                pts = sorted((k[3], v["server_cpu_ms"]) for k, v in rows.items()
                             if k[:3] == (server, tr, op) and v.get("server_cpu_ms"))
                if pts:
                    ax.plot(*zip(*pts, strict=True), style, color=COLORS[server], label=f"{server} {tr}")
        ax.set(xscale="log", yscale="log", xlabel="registered tools", ylabel="server CPU ms per request",
               title=f"{label}, c=1")
        ax.legend(fontsize=7)
    ax = axes[2]
    for family in ("mcpkit", "sdk"):  # the SDK's points: `sdk` or `sdk-raised`, whichever opened them all
        full = sorted((r["streams"], r["fanout_p50_ms"], r["fanout_p100_ms"]) for r in listen
                      if r["server"].startswith(family) and r["opened"] == r["streams"] and r["fanout_p100_ms"])
        if full:
            xs, p50, p100 = zip(*full, strict=True)
            ax.plot(xs, p100, marker="o", color=COLORS[family], label=f"{family} p100")
            ax.plot(xs, p50, ":", marker=".", color=COLORS[family], label=f"{family} p50")
    ax.set(xscale="log", xlabel="listen streams (all open)", ylabel="ms from the change to the notification",
           title="listen fan-out")
    ax.legend(fontsize=7)
    ax = axes[3]
    bars = []
    if host:
        bars += [("bare client\n(stdio)", host["bare_wall_us"], "#999999"), ("host turn\n(stdio)", host["host_wall_us"], COLORS["mcpkit"])]
    micro = (gateway or {}).get("micro")
    if micro:
        bars += [("direct\n(memory)", micro["direct_us"], "#999999"), ("forwarder\n(memory)", micro["forwarder_us"], "#cccccc"),
                 ("proxy()\n(memory)", micro["proxy_us"], COLORS["mcpkit"])]
    if bars:
        ax.bar(range(len(bars)), [b[1] for b in bars], color=[b[2] for b in bars])
        ax.set_xticks(range(len(bars)), [b[0] for b in bars], fontsize=7)
    ax.set(ylabel="µs per call (wall, best round)", title="host and gateway vs the call they wrap")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def section(results: str, docs: str) -> list[str]:
    """The markdown of the section (empty if nothing was measured); writes the plot."""
    rows, listen = tool_rows(results), listen_runs(results)
    host, gateway = _json(os.path.join(results, "host.json")), _json(os.path.join(results, "gateway.json"))
    if not (rows or listen or host or gateway):
        return []
    plot(rows, listen, host, gateway, os.path.join(docs, PNG))
    out = ["## Scale curves", "",
           "How the cost grows with what a server holds and how much a wrapper adds, mcpkit beside the official "
           "SDK where the SDK has the feature (it has no host and no gateway), all in the same `make bench` run.", "",
           f"![server CPU per request vs registered tools; listen fan-out vs streams; host and gateway overhead]({PNG})",
           ""]
    if rows:
        out += ["### Dispatch vs registered tools", "",
                "`scale_tools.py`: each server started as the shared harness starts it, with `--tools N` (`echo`, "
                "`add` and N-2 fillers), pinned to CPU 0; one caller (c=1) on CPU 1 with the harness's wire "
                "templates and clients, 2026-07-28, every reply checked (`tools/list` must return all N). Each cell "
                "runs for the scenario duration and at least 5 requests. Server CPU per request (schedstat, ns) is the "
                "figure to compare on a shared machine; p50 at 1,000 tools and up is mostly the caller reading and "
                "parsing the reply (MiBs of JSON), not the server.", ""] + tools_table(rows)
        out += ["", "Start-up and memory with N tools (spawn → the first complete `tools/list`; RSS after the "
                "requests):", ""] + startup_table(rows) + [""]
    if listen:
        out += ["### Listen fan-out vs streams", "",
                "`listeners.py` at each size: that many `subscriptions/listen` streams, then one tool-list change; "
                "fan-out from the call to each stream's notification. `sdk` refuses streams past its default "
                "limit (1,024); `sdk-raised` has it raised.", ""] + listen_table(listen) + [""]
    overhead = overhead_table(host, gateway)
    if overhead:
        out += ["### Host and gateway overhead per tool call", "",
                "`host_bench.py`: the same `bench_server.py` child on stdio, one call at a time, driven by the bare "
                "`Client.call_tool` and by `Host(...).agent().ask(...)` with a `ScriptedModel` (call `echo`, then "
                "answer): the host's pipeline and model-round bookkeeping on top of the call, best round. "
                "`gateway_bench.py --micro`: in one process over the memory transport; then over HTTP and stdio "
                "with the server processes' CPU (`/proc`).", ""] + overhead
    return out
