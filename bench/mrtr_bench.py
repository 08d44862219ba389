"""MRTR round trip vs a plain call, over Streamable HTTP (2026-07-28), against one server process.

Two closed-loop scenarios per concurrency level, both against the same server process:

* ``echo``  one ``tools/call echo {text}``; the reply's text must equal the text sent.
* ``mrtr``  one full multi round-trip request (MRTR):
            ``tools/call ask {text}`` -> ``input_required`` with one ``inputRequests`` entry
            (``elicitation/create``) and a ``requestState``; then the retry
            ``tools/call ask {text}`` + ``inputResponses: {<key>: {"action": "accept",
            "content": {"ok": true}}}`` + the ``requestState`` byte for byte -> complete, and the
            text must equal the text sent. For mcpkit the key must be ``confirm``; for servers
            that pick their own keys (the SDK) the key is taken from ``inputRequests``.

Wire per 2026-07-28: headers Content-Type, Accept ``application/json, text/event-stream``,
``MCP-Protocol-Version: 2026-07-28``, ``Mcp-Method``, ``Mcp-Name``; every request's params carry
``_meta`` with protocolVersion, clientCapabilities (``{"elicitation": {}}``) and clientInfo.

The load generator is the harness's raw asyncio HTTP/1.1 keep-alive client
(/work/shared/bench/mcpbench/http1.py), one connection per concurrent caller, one request in
flight each. Servers are started and stopped with the harness's own ``HttpServer`` (pinned to
CPU 0, stopped by PID); this process pins itself to CPU 1, like run.py. Server CPU is
utime+stime from /proc/<pid>/stat at the window edges (``mcpbench.procstat``), per round (MRTR)
or per call (echo). ``--repeat N`` interleaves the servers N times in one invocation; the table
gives medians over the repeats and every run is written as JSON.

    /tmp/venv-bench/bin/python /work/main/bench/mrtr_bench.py --servers mcpkit,sdk \\
        --concurrency 1,16 --duration 5 --warmup 1 --repeat 3 --out /work/main/bench/results/mrtr

Run it with the harness generator's venv (/tmp/venv-bench: stdlib + uvloop); it imports no MCP
library. The servers run on their own venvs (MCPKIT_PY, SDK_PY).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import itertools
import json
import os
import statistics
import sys
import time
from typing import Any

HARNESS = os.environ.get("MCPBENCH_DIR", "/work/shared/bench")
sys.path.insert(0, HARNESS)

from mcpbench import wire  # noqa: E402
from mcpbench.http1 import Connection, RequestPrefix, Response  # noqa: E402
from mcpbench.loadgen import Errors, Target  # noqa: E402
from mcpbench.procstat import ProcWatch, foreign_util, machine_busy, self_cpu  # noqa: E402
from mcpbench.run import HttpServer  # noqa: E402
from mcpbench.stats import summarize_latencies  # noqa: E402
from mcpbench.targets import Launch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MCPKIT_PY = os.environ.get("MCPKIT_PY", "/work/main/.venv/bin/python")
SDK_PY = os.environ.get("SDK_PY", "/tmp/venv-mcp/bin/python")

SERVERS: dict[str, dict[str, Any]] = {
    "mcpkit": {
        "cmd": [
            MCPKIT_PY,
            f"{HERE}/bench_server.py",
            "--transport",
            "http",
            "--port",
            "{port}",
            "--mrtr",
        ],
        "key": "confirm",
    },
    "sdk": {"cmd": [SDK_PY, f"{HERE}/sdk_mrtr_server.py", "--port", "{port}"], "key": None},
}

META = {
    "io.modelcontextprotocol/protocolVersion": wire.MODERN,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "mcpkit-mrtr-bench", "version": "1.0"},
}
ACCEPT_OK = {"action": "accept", "content": {"ok": True}}


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def decode(resp: Response, rid: int) -> Any:
    return wire.decode_reply(resp.headers.get("content-type", ""), resp.body, rid)


def result_of(resp: Response, rid: int) -> tuple[dict[str, Any] | None, str | None]:
    """(result, None) for a 200 JSON-RPC success with id ``rid``; (None, reason) otherwise."""
    if resp.status != 200:
        return None, f"HTTP {resp.status} {resp.body[:160]!r}"
    try:
        msg = decode(resp, rid)
    except ValueError as e:
        return None, f"bad JSON: {e}"
    if not isinstance(msg, dict) or msg.get("id") != rid:
        return None, f"id mismatch: {str(msg)[:120]}"
    if "error" in msg:
        err = msg["error"] or {}
        return None, f"error {err.get('code')} {str(err.get('message'))[:120]}"
    result = msg.get("result")
    if not isinstance(result, dict):
        return None, "no result object"
    return result, None


def check_text(result: dict[str, Any], want: str) -> str | None:
    if result.get("resultType", "complete") != "complete":
        return f"resultType {result.get('resultType')!r}, expected complete"
    if result.get("isError"):
        return f"isError: {str(result.get('content'))[:120]}"
    content = result.get("content") or []
    text = content[0].get("text") if content and isinstance(content[0], dict) else None
    return None if text == want else f"text {text!r} != {want!r}"


class Caller:
    """One keep-alive connection doing one op in a closed loop."""

    def __init__(self, t: Target, key: str | None) -> None:
        self.conn = Connection(t.host, t.port)
        hdr = wire.http_headers("modern", "tools/call", "echo")
        self.echo_prefix = RequestPrefix(t.host, t.port, t.path, hdr)
        self.ask_prefix = RequestPrefix(
            t.host, t.port, t.path, wire.http_headers("modern", "tools/call", "ask")
        )
        self.key = key

    async def echo(self, rid: int, text: str) -> str | None:
        body = dumps(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": text}, "_meta": META},
            }
        )
        resp = await self.conn.send(self.echo_prefix.with_body(body))
        result, why = result_of(resp, rid)
        return why if result is None else check_text(result, text)

    async def mrtr(self, rid: int, text: str) -> str | None:
        args = {"text": text}
        # round 1: the call; the server answers input_required
        body = dumps(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "tools/call",
                "params": {"name": "ask", "arguments": args, "_meta": META},
            }
        )
        resp = await self.conn.send(self.ask_prefix.with_body(body))
        result, why = result_of(resp, rid)
        if result is None:
            return f"round 1: {why}"
        if result.get("resultType") != "input_required":
            return f"round 1: resultType {result.get('resultType')!r}, expected input_required"
        reqs = result.get("inputRequests")
        state = result.get("requestState")
        if not isinstance(reqs, dict) or len(reqs) != 1:
            return f"round 1: inputRequests {str(reqs)[:120]}"
        key, req = next(iter(reqs.items()))
        if self.key is not None and key != self.key:
            return f"round 1: input key {key!r} != {self.key!r}"
        if not isinstance(req, dict) or req.get("method") != "elicitation/create":
            return f"round 1: input request {str(req)[:120]}"
        if not isinstance(state, str) or not state:
            return "round 1: no requestState"
        # round 2: the retry with the answer and the state
        rid2 = rid + 1
        body = dumps(
            {
                "jsonrpc": "2.0",
                "id": rid2,
                "method": "tools/call",
                "params": {
                    "name": "ask",
                    "arguments": args,
                    "inputResponses": {key: ACCEPT_OK},
                    "requestState": state,
                    "_meta": META,
                },
            }
        )
        resp = await self.conn.send(self.ask_prefix.with_body(body))
        result, why = result_of(resp, rid2)
        if result is None:
            return f"round 2: {why}"
        why = check_text(result, text)
        return None if why is None else f"round 2: {why}"

    def close(self) -> None:
        self.conn.close()


async def scenario(
    url: str,
    op: str,
    concurrency: int,
    duration: float,
    warmup: float,
    watch: ProcWatch,
    key: str | None,
) -> dict[str, Any]:
    t = Target.from_url(url)
    callers = [Caller(t, key) for _ in range(concurrency)]
    ids = itertools.count(1, 2)  # MRTR uses rid and rid+1
    errors = Errors()
    lat_all: list[list[float]] = []
    t_measure = time.perf_counter() + warmup
    t_end = t_measure + duration
    marks: dict[str, float] = {}

    async def sampler() -> None:
        await asyncio.sleep(max(0.0, t_measure - time.perf_counter()))
        marks.update(
            t0=time.perf_counter(), cpu0=watch.cpu(), self0=self_cpu(), busy0=machine_busy()
        )
        await asyncio.sleep(max(0.0, t_end - time.perf_counter()))
        marks.update(
            t1=time.perf_counter(), cpu1=watch.cpu(), self1=self_cpu(), busy1=machine_busy()
        )

    async def worker(c: Caller) -> None:
        lat: list[float] = []
        lat_all.append(lat)
        fn = c.mrtr if op == "mrtr" else c.echo
        pc = time.perf_counter
        while True:
            now = pc()
            if now >= t_end:
                break
            rid = next(ids)
            try:
                why = await fn(rid, f"hello world {rid}")
            except Exception as e:
                why = f"{type(e).__name__}: {e}"
                await asyncio.sleep(0.001)
            if why is not None:
                errors.add(why)
                if errors.count > 1000:
                    break
                continue
            done = pc()
            if t_measure <= done <= t_end:
                lat.append(done - now)

    samp = asyncio.create_task(sampler())
    await asyncio.gather(*(worker(c) for c in callers))
    await samp
    for c in callers:
        c.close()

    lat = [x for part in lat_all for x in part]
    n = len(lat)
    window = marks["t1"] - marks["t0"]
    srv = marks["cpu1"] - marks["cpu0"]
    cli = marks["self1"] - marks["self0"]
    out: dict[str, Any] = {
        "op": op,
        "concurrency": concurrency,
        "duration_s": round(window, 3),
        "units": n,
        "http_requests_per_unit": 2 if op == "mrtr" else 1,
        "errors": errors.count,
        "error_samples": errors.samples,
        "units_per_s": round(n / window, 1) if window > 0 else None,
    }
    out.update(summarize_latencies(lat))
    if n:
        out["server_cpu_ms_per_unit"] = round(srv / n * 1000, 4)
        out["client_cpu_ms_per_unit"] = round(cli / n * 1000, 4)
    out["server_cpu_util"] = round(srv / window, 3)
    out["client_cpu_util"] = round(cli / window, 3)
    out["foreign_cpu_util"] = foreign_util(marks["busy0"], marks["busy1"], srv + cli, window)
    return out


class _Attached:
    """A server someone else started (``--attach URL --pid PID``, e.g. to py-spy it)."""

    def __init__(self, url: str, pid: int) -> None:
        self.url, self.pid = url, pid

    def start(self) -> None:
        pass

    async def ready(self, era: str) -> float:
        return 0.0

    def alive(self) -> bool:
        return os.path.exists(f"/proc/{self.pid}")

    def stop(self) -> None:
        pass


async def run_server(
    name: str, a: argparse.Namespace, port: int, logdir: str
) -> list[dict[str, Any]]:
    spec = SERVERS[name]
    srv: Any
    if a.attach:
        srv = _Attached(a.attach, a.pid)
    else:
        launch = Launch(cmd=list(spec["cmd"]), eras=["modern"])
        srv = HttpServer(
            launch, port, 2, {a.server_cpu} if a.pin else None, os.path.join(logdir, f"{name}.log")
        )
    srv.start()
    recs = []
    try:
        await srv.ready("modern")
        watch = ProcWatch(srv.pid if a.attach else srv.proc.pid)
        for c in a.concurrency:
            for op in a.ops:
                rec = await scenario(srv.url, op, c, a.duration, a.warmup, watch, spec["key"])
                rec["server"] = name
                recs.append(rec)
                print(
                    f"[{time.strftime('%H:%M:%S')}] {name:7s} {op:5s} c={c:<3d} "
                    f"{rec['units_per_s']} /s  p50 {rec['p50_ms']} p99 {rec['p99_ms']} ms  "
                    f"srv {rec.get('server_cpu_ms_per_unit')} ms/unit  cli {rec.get('client_cpu_ms_per_unit')}"
                    f"  foreign {rec['foreign_cpu_util']}  err {rec['errors']} {rec['error_samples'][:2]}",
                    file=sys.stderr,
                    flush=True,
                )
                if not srv.alive():
                    raise RuntimeError(f"{name} exited during the run")
    finally:
        srv.stop()
    return recs


def table(runs: list[list[dict[str, Any]]]) -> str:
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for recs in runs:
        for r in recs:
            groups.setdefault((r["server"], r["concurrency"], r["op"]), []).append(r)

    def med(rs: list[dict[str, Any]], k: str) -> float | None:
        v = [r[k] for r in rs if r.get(k) is not None]
        return statistics.median(v) if v else None

    def noise(rs: list[dict[str, Any]]) -> str:
        v = [r["units_per_s"] for r in rs if r.get("units_per_s")]
        if len(v) < 2:
            return "-"
        return f"{(max(v) - min(v)) / statistics.median(v):.0%}"

    lines = [
        "| server | conc | op | unit | units/s | noise | p50 ms | p99 ms | srv CPU ms/unit "
        "| srv CPU ms/HTTP req | cli CPU ms/unit | srv util | foreign | runs | err |",
        "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (server, c, op), rs in sorted(
        groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] != "echo")
    ):
        srv = med(rs, "server_cpu_ms_per_unit")
        per_req = srv / rs[0]["http_requests_per_unit"] if srv is not None else None
        f = lambda x, d=3: "-" if x is None else f"{x:,.{d}f}"  # noqa: E731
        lines.append(
            f"| {server} | {c} | {op} | {'round (2 POSTs)' if op == 'mrtr' else 'call'} "
            f"| {f(med(rs, 'units_per_s'), 0)} | {noise(rs)} | {f(med(rs, 'p50_ms'))} | {f(med(rs, 'p99_ms'))} "
            f"| {f(srv)} | {f(per_req)} | {f(med(rs, 'client_cpu_ms_per_unit'))} "
            f"| {f(med(rs, 'server_cpu_util'), 2)} | {f(med(rs, 'foreign_cpu_util'), 2)} | {len(rs)} "
            f"| {sum(r['errors'] for r in rs)} |"
        )
    # ratio rows: MRTR round vs plain call on the same server
    lines.append("")
    lines.append(
        "| server | conc | MRTR rounds/s ÷ echo calls/s | MRTR p50 ÷ echo p50 | MRTR srv CPU ÷ echo srv CPU |"
    )
    lines.append("|---|---:|---:|---:|---:|")
    for server, c in sorted({(k[0], k[1]) for k in groups}):
        e, m = groups.get((server, c, "echo")), groups.get((server, c, "mrtr"))
        if not e or not m:
            continue

        def ratio(k: str, m: list[dict[str, Any]] = m, e: list[dict[str, Any]] = e) -> str:
            x, y = med(m, k), med(e, k)
            return "-" if x is None or not y else f"{x / y:.2f}"

        lines.append(
            f"| {server} | {c} | {ratio('units_per_s')} | {ratio('p50_ms')} "
            f"| {ratio('server_cpu_ms_per_unit')} |"
        )
    return "\n".join(lines)


async def amain(a: argparse.Namespace) -> int:
    os.makedirs(os.path.join(a.out, "logs"), exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    runs: list[list[dict[str, Any]]] = []
    port = a.port_base
    for rep in range(a.repeat):
        recs: list[dict[str, Any]] = []
        meta = {
            "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "repeat_index": rep,
            "loadavg_start": os.getloadavg(),
            "pinned": a.pin,
            "server_cpu": a.server_cpu,
            "client_cpu": a.client_cpu,
            "settings": {k: v for k, v in vars(a).items()},
            "commands": {n: SERVERS[n]["cmd"] for n in a.servers},
        }
        print(
            f"[{time.strftime('%H:%M:%S')}] run {rep + 1}/{a.repeat}", file=sys.stderr, flush=True
        )
        for name in a.servers:
            port += 1
            recs += await run_server(name, a, port, os.path.join(a.out, "logs"))
        meta["loadavg_end"] = os.getloadavg()
        path = os.path.join(a.out, f"mrtr-{stamp}-{rep + 1}.json")
        with open(path, "w") as f:
            json.dump({"meta": meta, "results": recs}, f, indent=1)
        runs.append(recs)
    report = table(runs)
    with open(os.path.join(a.out, f"mrtr-{stamp}-report.md"), "w") as f:
        f.write(report + "\n")
    print(report)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--servers", default="mcpkit", help=f"comma list of {sorted(SERVERS)}")
    ap.add_argument("--ops", default="echo,mrtr")
    ap.add_argument("--concurrency", default="1,16")
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "mrtr"))
    ap.add_argument("--port-base", type=int, default=18600)
    ap.add_argument("--no-pin", dest="pin", action="store_false")
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--no-uvloop", dest="uvloop", action="store_false")
    ap.add_argument(
        "--attach",
        default=None,
        metavar="URL",
        help="drive an already running server (one of --servers, for its key check) instead of starting it",
    )
    ap.add_argument(
        "--pid", type=int, default=None, help="with --attach: the server's PID (for its CPU)"
    )
    a = ap.parse_args()
    if a.attach and (a.pid is None or len(a.servers.split(",")) != 1):
        ap.error("--attach needs --pid and exactly one --servers name")
    a.servers = [s for s in a.servers.split(",") if s]
    a.ops = [s for s in a.ops.split(",") if s]
    a.concurrency = [int(x) for x in a.concurrency.split(",") if x]
    unknown = [s for s in a.servers if s not in SERVERS] + [
        o for o in a.ops if o not in ("echo", "mrtr")
    ]
    if unknown:
        ap.error(f"unknown: {unknown}")
    if a.pin and (os.cpu_count() or 1) < 2:
        a.pin = False
    if a.pin:
        os.sched_setaffinity(0, {a.client_cpu})
    if a.uvloop:
        try:
            import uvloop

            return uvloop.run(amain(a))
        except ImportError:
            pass
    return asyncio.run(amain(a))


if __name__ == "__main__":
    sys.exit(main())
