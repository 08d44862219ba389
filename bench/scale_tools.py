"""Dispatch vs registered tools: `tools/call echo` and `tools/list` at 10, 1,000 and 10,000 tools,
mcpkit and the official SDK, over Streamable HTTP and stdio (2026-07-28), one caller.

    python scale_tools.py --tools 10,1000,10000 --out results/scale-tools.json

Each server is started as the shared harness starts it (`targets.json`, the anchors' file:
`--tools N` registers `echo`, `add` and N-2 fillers), pinned to CPU 0 with this driver on CPU 1,
and driven with the harness's own wire templates, HTTP client and stdio pipe (every reply
checked; `tools/list` must return all N tools). Why not `run.py` itself: its windows are
seconds, and at 10,000 tools the SDK answers fewer `tools/list` than fit in one (none in a
2 s window) and its stdio leg waits 30 s for a reply. Here each (server, transport, size, op)
runs for `--duration` seconds *and* at least `--min` requests, at most `--max`, and gives up
after `--timeout` seconds (recorded as an error). Figures: requests/s, p50/p99, the server's
CPU per request (schedstat, the whole process tree), the reply size, spawn→ready and RSS.
Loopback only; sizes interleave the servers (all of size N, then the next N).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import glob
import json
import os
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.environ.get("MCPBENCH_DIR", os.path.join(HERE, "../../shared/bench"))
sys.path.insert(0, os.path.abspath(HARNESS))

from mcpbench import loadgen, wire  # noqa: E402
from mcpbench.procstat import ProcWatch, tree_pids  # noqa: E402
from mcpbench.run import HttpServer  # noqa: E402
from mcpbench.stats import summarize_latencies  # noqa: E402
from mcpbench.stdio import StdioServer  # noqa: E402
from mcpbench.targets import load  # noqa: E402

OPS = {"tools/call:echo": lambda: wire.tool_call("modern", "echo"), "tools/list": lambda: wire.tools_list("modern")}
SERVER_CPU, DRIVER_CPU = {0}, {1}


def cpu_seconds(pid: int) -> float:
    """On-CPU seconds of a process tree, every live thread, from /proc/*/task/*/schedstat
    (nanoseconds: a few requests of 1-2 ms are measurable, unlike /proc/PID/stat's 10 ms ticks)."""
    total = 0
    for p in tree_pids(pid):
        for task in glob.glob(f"/proc/{p}/task/*/schedstat"):
            with contextlib.suppress(OSError, ValueError, IndexError), open(task) as f:
                total += int(f.read().split()[0])
    return total / 1e9


class Budget:
    """How long one op runs: `duration` s and `least` requests, at most `most`, never past `timeout`."""

    def __init__(self, duration: float, least: int, most: int, timeout: float) -> None:
        self.duration, self.least, self.most, self.timeout = duration, least, most, timeout


def check(tpl: wire.Template, rid: int, msg: Any, tools: int) -> str | None:
    why = tpl.check(rid, msg)
    if why is None and tpl.method == "tools/list" and len(msg["result"]["tools"]) != tools:
        why = f"tools/list returned {len(msg['result']['tools'])} tools, expected {tools}"
    return why


async def drive(send: Any, op: str, tools: int, watch: ProcWatch, b: Budget) -> dict[str, Any]:
    """One op in a closed loop of one caller; `send(tpl, rid)` returns (reply, bytes or None)."""
    tpl = OPS[op]()
    for rid in range(1, 4):  # warm-up: three requests, not counted
        msg, _ = await asyncio.wait_for(send(tpl, rid), b.timeout)
        if why := check(tpl, rid, msg, tools):
            return {"requests": 0, "errors": 1, "error_samples": [why]}
    lat: list[float] = []
    errors: list[str] = []
    size: int | None = None
    cpu0, began = cpu_seconds(watch.pid), time.perf_counter()
    deadline = began + b.timeout
    rid = 100
    while len(lat) < b.most and (len(lat) < b.least or time.perf_counter() - began < b.duration):
        rid += 1
        t0 = time.perf_counter()
        try:
            msg, size = await asyncio.wait_for(send(tpl, rid), max(0.01, deadline - t0))
        except TimeoutError:
            errors.append(f"no reply within {b.timeout:.0f} s")
            break
        lat.append(time.perf_counter() - t0)
        if why := check(tpl, rid, msg, tools):
            errors.append(why)
            break
    seconds = time.perf_counter() - began
    cpu = cpu_seconds(watch.pid) - cpu0
    return {"requests": len(lat), "seconds": round(seconds, 3), "rps": round(len(lat) / seconds, 1),
            **summarize_latencies(lat), "server_cpu_ms": round(1000 * cpu / len(lat), 4) if lat else None,
            "reply_kib": None if size is None else round(size / 1024, 1), "errors": len(errors), "error_samples": errors[:3]}


async def over_http(launch: Any, port: int, tools: int, ops: list[str], b: Budget, log: str) -> list[dict[str, Any]]:
    srv = HttpServer(launch, port, tools, SERVER_CPU, log)
    srv.start()
    try:
        ready = await srv.ready("modern", timeout=b.timeout)
        watch = ProcWatch(srv.proc.pid)  # type: ignore[union-attr]
        target = loadgen.Target.from_url(srv.url)
        out = []
        for op in ops:
            session = loadgen._RawSession(target, "modern")
            tpl = OPS[op]()
            await session.open(tpl.method, tpl.tool)

            async def send(tpl: wire.Template, rid: int, session: Any = session) -> tuple[Any, int]:
                resp = await session.call(tpl.render(rid))
                return loadgen._decode(resp, rid), len(resp.body)

            out.append({"op": op, "ready_s": round(ready, 2), **await drive(send, op, tools, watch, b),
                        "rss_mb": round(watch.mem()["rss_mb"], 1)})
            await session.close()
        return out
    finally:
        srv.stop()


async def over_stdio(launch: Any, tools: int, ops: list[str], b: Budget, log: str) -> list[dict[str, Any]]:
    srv = StdioServer(launch.render(port=0, tools=tools), {**os.environ, **launch.env}, SERVER_CPU, log)
    t0 = time.perf_counter()
    await srv.start()
    try:
        await srv.handshake("modern")

        async def send(tpl: wire.Template, rid: int) -> tuple[Any, int]:
            await srv.send(tpl.render(rid) + b"\n")
            return await srv.read_reply(rid, timeout=b.timeout), None

        first, _ = await asyncio.wait_for(send(OPS["tools/list"](), 1), b.timeout)
        ready = time.perf_counter() - t0
        watch = ProcWatch(srv.pid)
        out = []
        for op in ops:
            r = await drive(send, op, tools, watch, b)
            if op == "tools/list":
                r["reply_kib"] = round(len(wire.dumps(first)) / 1024, 1)
            out.append({"op": op, "ready_s": round(ready, 2), **r, "rss_mb": round(watch.mem()["rss_mb"], 1)})
        return out
    finally:
        await srv.stop()


async def conduct(a: argparse.Namespace) -> list[dict[str, Any]]:
    targets, _ = load([os.path.join(HARNESS, "anchors", "targets.json"), os.path.join(HERE, "targets.json")])
    b = Budget(a.duration, a.min, a.max, a.timeout)
    ops = a.ops.split(",")
    os.makedirs(a.logs, exist_ok=True)
    results = []
    port = a.port_base
    for n in (int(x) for x in a.tools.split(",")):
        for name in a.servers.split(","):
            t = targets[name]
            for tr in a.transports.split(","):
                log = os.path.join(a.logs, f"{name}-{tr}-{n}.log")
                port += 1
                rows = await (over_http(t.http, port, n, ops, b, log) if tr == "http"
                              else over_stdio(t.stdio, n, ops, b, log))
                for r in rows:
                    results.append({"server": name, "transport": tr, "tools": n, **r})
                    print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", default="mcpkit,sdk")
    ap.add_argument("--tools", default="10,1000,10000")
    ap.add_argument("--transports", default="http,stdio")
    ap.add_argument("--ops", default="tools/call:echo,tools/list")
    ap.add_argument("--duration", type=float, default=2.0, help="seconds per op (at least)")
    ap.add_argument("--min", type=int, default=5, help="requests per op (at least)")
    ap.add_argument("--max", type=int, default=20_000, help="requests per op (at most)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds: a start-up or an op, at most")
    ap.add_argument("--port-base", type=int, default=24700)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    a.logs = os.path.splitext(a.out)[0] + "-logs"
    if (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, DRIVER_CPU)
    else:
        SERVER_CPU.clear()
    import uvloop

    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    results = uvloop.run(conduct(a))
    with open(a.out, "w") as f:
        json.dump({"started": started, "duration": a.duration, "min": a.min, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
