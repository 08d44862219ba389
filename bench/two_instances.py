"""Two mcpkit HTTP instances behind nothing but round-robin in the generator (2026-07-28 wire).

The modern era is stateless: any instance can answer any request, and an MRTR retry can land on
another instance than the first round, as long as all instances seal `requestState` with the same
key (`MCPKIT_STATE_KEYS`). This script starts

* ``one``:  one instance (CPU 0), the generator on CPU 1: the single-instance reference;
* ``two``:  instance A on CPU 0 and instance B on CPU 1, the generator unpinned (on a 2-core
  machine it shares the cores with the servers, so this shows correctness and the cost split,
  not linear scaling),

and drives, per setup, closed loops over the harness's raw HTTP/1.1 client (one keep-alive
connection per caller, callers alternate between the instances):

* ``echo``        ``tools/call echo``; the reply text must equal the text sent;
* ``mrtr-cross``  ``tools/call ask`` (elicits one answer) on one instance -> ``input_required``
                  with a ``requestState``; the retry with ``inputResponses`` + that state goes to
                  the *other* instance and must complete with the text sent (``one``: same one).

Server CPU is read from /proc/<pid>/stat at the window edges, summed over the instances.

    python two_instances.py --concurrency 16 --duration 3 --warmup 1 --repeat 3 --out DIR

Runs on the generator venv (stdlib + uvloop); servers on MCPKIT_PY.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime as dt
import itertools
import json
import os
import sys
import time
from typing import Any

HARNESS = os.environ.get("MCPBENCH_DIR", os.path.join(os.path.dirname(__file__), "../../shared/bench"))
sys.path.insert(0, os.path.abspath(HARNESS))

from mcpbench import wire  # noqa: E402
from mcpbench.http1 import Connection, RequestPrefix, Response  # noqa: E402
from mcpbench.loadgen import Errors, Target  # noqa: E402
from mcpbench.procstat import ProcWatch, foreign_util, machine_busy, self_cpu  # noqa: E402
from mcpbench.run import HttpServer  # noqa: E402
from mcpbench.stats import summarize_latencies  # noqa: E402
from mcpbench.targets import Launch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MCPKIT_PY = os.environ.get("MCPKIT_PY", sys.executable)
META = {
    "io.modelcontextprotocol/protocolVersion": wire.MODERN,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "mcpkit-two-instances", "version": "1.0"},
}
ACCEPT_OK = {"action": "accept", "content": {"ok": True}}


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def result_of(resp: Response, rid: int) -> tuple[dict[str, Any] | None, str | None]:
    if resp.status != 200:
        return None, f"HTTP {resp.status} {resp.body[:160]!r}"
    msg = wire.decode_reply(resp.headers.get("content-type", ""), resp.body, rid)
    if not isinstance(msg, dict) or msg.get("id") != rid:
        return None, f"id mismatch: {str(msg)[:120]}"
    if "error" in msg:
        return None, f"error {str(msg['error'])[:160]}"
    result = msg.get("result")
    return (result, None) if isinstance(result, dict) else (None, "no result object")


def text_ok(result: dict[str, Any], want: str) -> str | None:
    if result.get("resultType", "complete") != "complete" or result.get("isError"):
        return f"not a complete result: {str(result)[:160]}"
    content = result.get("content") or [{}]
    return None if content[0].get("text") == want else f"text {content[0].get('text')!r} != {want!r}"


class Caller:
    """One keep-alive connection to each instance; `first` picks where round 1 goes."""

    def __init__(self, targets: list[Target], first: int) -> None:
        self.conns = [Connection(t.host, t.port) for t in targets]
        self.echo = [RequestPrefix(t.host, t.port, t.path, wire.http_headers("modern", "tools/call", "echo"))
                     for t in targets]
        self.ask = [RequestPrefix(t.host, t.port, t.path, wire.http_headers("modern", "tools/call", "ask"))
                    for t in targets]
        self.first = first % len(targets)
        self.second = (first + 1) % len(targets)

    async def call_echo(self, rid: int, text: str) -> str | None:
        i = self.first
        body = dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                      "params": {"name": "echo", "arguments": {"text": text}, "_meta": META}})
        result, why = result_of(await self.conns[i].send(self.echo[i].with_body(body)), rid)
        return why if result is None else text_ok(result, text)

    async def call_mrtr(self, rid: int, text: str) -> str | None:
        args = {"text": text}
        a, b = self.first, self.second
        body = dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                      "params": {"name": "ask", "arguments": args, "_meta": META}})
        result, why = result_of(await self.conns[a].send(self.ask[a].with_body(body)), rid)
        if result is None:
            return f"round 1: {why}"
        state, reqs = result.get("requestState"), result.get("inputRequests")
        if result.get("resultType") != "input_required" or not isinstance(reqs, dict) or "confirm" not in reqs:
            return f"round 1: {str(result)[:160]}"
        body = dumps({"jsonrpc": "2.0", "id": rid + 1, "method": "tools/call",
                      "params": {"name": "ask", "arguments": args, "inputResponses": {"confirm": ACCEPT_OK},
                                 "requestState": state, "_meta": META}})
        result, why = result_of(await self.conns[b].send(self.ask[b].with_body(body)), rid + 1)
        if result is None:
            return f"round 2 (other instance): {why}"
        why = text_ok(result, text)
        return None if why is None else f"round 2: {why}"

    def close(self) -> None:
        for c in self.conns:
            c.close()


async def scenario(urls: list[str], op: str, c: int, duration: float, warmup: float,
                   watches: list[ProcWatch]) -> dict[str, Any]:
    targets = [Target.from_url(u) for u in urls]
    callers = [Caller(targets, i) for i in range(c)]
    ids = itertools.count(1, 2)
    errors = Errors()
    lat: list[float] = []
    t_measure = time.perf_counter() + warmup
    t_end = t_measure + duration
    marks: dict[str, Any] = {}

    async def sampler() -> None:
        await asyncio.sleep(max(0.0, t_measure - time.perf_counter()))
        marks.update(t0=time.perf_counter(), cpu0=[w.cpu() for w in watches], self0=self_cpu(), busy0=machine_busy())
        await asyncio.sleep(max(0.0, t_end - time.perf_counter()))
        marks.update(t1=time.perf_counter(), cpu1=[w.cpu() for w in watches], self1=self_cpu(), busy1=machine_busy())

    async def worker(caller: Caller) -> None:
        fn = caller.call_mrtr if op == "mrtr-cross" else caller.call_echo
        pc = time.perf_counter
        while (now := pc()) < t_end:
            rid = next(ids)
            try:
                why = await fn(rid, f"hello world {rid}")
            except Exception as e:  # noqa: BLE001 - any failure is an error
                why = f"{type(e).__name__}: {e}"
                await asyncio.sleep(0.001)
            if why is not None:
                errors.add(why)
                if errors.count > 1000:
                    return
                continue
            done = pc()
            if t_measure <= done <= t_end:
                lat.append(done - now)

    samp = asyncio.create_task(sampler())
    await asyncio.gather(*(worker(x) for x in callers))
    await samp
    for x in callers:
        x.close()
    window = marks["t1"] - marks["t0"]
    per_instance = [b - a for a, b in zip(marks["cpu0"], marks["cpu1"])]
    srv = sum(per_instance)
    cli = marks["self1"] - marks["self0"]
    n = len(lat)
    rec: dict[str, Any] = {"op": op, "concurrency": c, "instances": len(urls), "units": n,
                           "units_per_s": round(n / window, 1), "errors": errors.count,
                           "error_samples": errors.samples,
                           "server_cpu_util_per_instance": [round(x / window, 3) for x in per_instance],
                           "client_cpu_util": round(cli / window, 3),
                           "foreign_cpu_util": foreign_util(marks["busy0"], marks["busy1"], srv + cli, window)}
    rec.update(summarize_latencies(lat))
    if n:
        rec["server_cpu_ms_per_unit"] = round(srv / n * 1000, 4)
    return rec


async def run_setup(name: str, a: argparse.Namespace, ports: list[int], logdir: str) -> list[dict[str, Any]]:
    cmd = [MCPKIT_PY, f"{HERE}/bench_server.py", "--transport", "http", "--port", "{port}", "--mrtr"]
    launch = Launch(cmd=cmd, eras=["modern"], env={"MCPKIT_STATE_KEYS": a.key})
    cpus = [{0}, {1}] if name == "two" else [{0}]
    servers = [HttpServer(launch, port, 2, cpu if a.pin else None, os.path.join(logdir, f"{name}-{i}.log"))
               for i, (port, cpu) in enumerate(zip(ports, cpus))]
    if a.pin:  # the generator: CPU 1 beside one instance; unpinned beside two
        os.sched_setaffinity(0, {1} if name == "one" else {0, 1})
    for s in servers:
        s.start()
    recs = []
    try:
        for s in servers:
            await s.ready("modern")
        watches = [ProcWatch(s.proc.pid) for s in servers]  # type: ignore[union-attr]
        for op in ("echo", "mrtr-cross"):
            rec = await scenario([s.url for s in servers], op, a.concurrency, a.duration, a.warmup, watches)
            rec["setup"] = name
            rec["server_peak_rss_mb"] = [round(w.mem()["peak_rss_mb"], 1) for w in watches]
            recs.append(rec)
            print(f"[{time.strftime('%H:%M:%S')}] {name} {op:10s} c={a.concurrency} {rec['units_per_s']} /s "
                  f"p50 {rec['p50_ms']} p99 {rec['p99_ms']} ms srv {rec.get('server_cpu_ms_per_unit')} ms/unit "
                  f"err {rec['errors']} {rec['error_samples'][:2]}", file=sys.stderr, flush=True)
    finally:
        for s in servers:
            s.stop()
    return recs


async def amain(a: argparse.Namespace) -> int:
    os.makedirs(os.path.join(a.out, "logs"), exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    port = a.port_base
    for rep in range(a.repeat):
        recs: list[dict[str, Any]] = []
        for name in ("one", "two"):
            recs += await run_setup(name, a, [port + 1, port + 2], os.path.join(a.out, "logs"))
            port += 2
        with open(os.path.join(a.out, f"two-{stamp}-{rep + 1}.json"), "w") as f:
            json.dump({"meta": {"repeat_index": rep, "settings": {k: v for k, v in vars(a).items() if k != "key"}},
                       "results": recs}, f, indent=1)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "two"))
    ap.add_argument("--port-base", type=int, default=24800)
    ap.add_argument("--no-pin", dest="pin", action="store_false")
    a = ap.parse_args()
    a.key = base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")  # shared by both instances
    a.pin = a.pin and (os.cpu_count() or 1) >= 2
    try:
        import uvloop

        return uvloop.run(amain(a))
    except ImportError:
        return asyncio.run(amain(a))


if __name__ == "__main__":
    sys.exit(main())
