"""Scale-out figures: calls/s of plain `tools/call echo` through nginx (deploy/nginx/mcpkit.conf)
with 1 and 3 mcpkit instances, and server CPU per plain call with and without Redis attached.

Setups (each `--repeat` times, interleaved; medians printed):

* ``direct``        one instance, no Redis; the instance on CPU 0, the generator on CPU 1
* ``direct+redis``  the same with every shared part in Redis (`server.use_redis`: event bus,
                    tasks, handles); a plain call should cost the same
* ``nginx-1``       nginx in front of one instance (Redis attached); nothing pinned
* ``nginx-3``       nginx in front of three instances (Redis attached); nothing pinned

The generator is the harness's raw HTTP/1.1 client (`../shared/bench`), `--concurrency`
callers, each on a keep-alive connection. Server CPU is utime+stime from /proc summed over the
instances; nginx's and Redis's are reported beside it.

    .venv/bin/python bench/scale_out.py [--concurrency 32] [--duration 5] [--repeat 3]

Needs nginx and redis-server on PATH (the Debian packages).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HARNESS = os.environ.get("MCPBENCH_DIR", str(ROOT.parent / "shared/bench"))
sys.path.insert(0, HARNESS)
sys.path.insert(0, str(ROOT / "tests"))

from mcpbench import loadgen, wire  # noqa: E402
from mcpbench.http1 import Connection, RequestPrefix  # noqa: E402
from mcpbench.loadgen import Target  # noqa: E402
from mcpbench.procstat import ProcWatch, self_cpu  # noqa: E402

from processes import REDIS  # noqa: E402
from scale_support import NGINX, nginx_conf  # noqa: E402
from support import free_port  # noqa: E402

META = {
    "io.modelcontextprotocol/protocolVersion": wire.MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "mcpkit-scale-out", "version": "1.0"},
}


def body(rid: int) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": f"hello {rid}"}, "_meta": META},
    }
    return json.dumps(message, separators=(",", ":")).encode()


def spawn(argv: list[str], cpus: set[int] | None, log: Path, **env: str) -> subprocess.Popen[bytes]:
    def pin() -> None:
        if cpus:
            os.sched_setaffinity(0, cpus)

    with open(log, "ab") as out:
        return subprocess.Popen(
            argv, stdout=out, stderr=out, env={**os.environ, **env}, preexec_fn=pin
        )


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


async def measure(url: str, concurrency: int, duration: float, warmup: float, watch: dict[str, list[int]]) -> dict[str, Any]:
    target = Target.from_url(url)
    prefix = RequestPrefix(target.host, target.port, target.path, wire.http_headers("modern", "tools/call", "echo"))
    ids = itertools.count(1)
    done = 0
    errors = 0
    loop = asyncio.get_running_loop()
    start = loop.time() + warmup
    end = start + duration
    marks: dict[str, Any] = {}

    def cpu() -> dict[str, float]:
        return {name: sum(ProcWatch(p).cpu() for p in pids) for name, pids in watch.items()}

    async def sampler() -> None:
        await asyncio.sleep(warmup)
        marks["cpu0"], marks["self0"] = cpu(), self_cpu()
        await asyncio.sleep(duration)
        marks["cpu1"], marks["self1"] = cpu(), self_cpu()

    async def caller() -> None:
        nonlocal done, errors
        conn = Connection(target.host, target.port)
        try:
            while (now := loop.time()) < end:
                rid = next(ids)
                resp = await conn.send(prefix.with_body(body(rid)))
                ok = resp.status == 200 and f"hello {rid}".encode() in resp.body
                if start <= now and loop.time() <= end:
                    done += ok
                    errors += not ok
        finally:
            conn.close()

    await asyncio.gather(sampler(), *(caller() for _ in range(concurrency)))
    out: dict[str, Any] = {"calls_per_s": done / duration, "errors": errors}
    for name in watch:
        used = marks["cpu1"][name] - marks["cpu0"][name]
        out[f"{name}_cpu_us_per_call"] = used / done * 1e6 if done else None
        out[f"{name}_cpu_util"] = used / duration
    out["client_cpu_util"] = (marks["self1"] - marks["self0"]) / duration
    return out


async def setup(name: str, a: argparse.Namespace, redis_url: str, redis_pid: int, tmp: Path) -> dict[str, Any]:
    count = 3 if name == "nginx-3" else 1
    pinned = name.startswith("direct")
    ports = [free_port() for _ in range(count)]
    argv = [sys.executable, str(HERE / "bench_server.py"), "--transport", "http"]
    extra = [] if name == "direct" else ["--redis", redis_url]
    key = {"MCPKIT_STATE_KEYS": a.key}
    servers = [spawn([*argv, "--port", str(p), *extra], {0} if pinned else None, tmp / f"{name}.log", **key) for p in ports]
    procs = list(servers)
    watch: dict[str, list[int]] = {"server": [s.pid for s in servers], "redis": [redis_pid]}
    os.sched_setaffinity(0, {1} if pinned else set(range(os.cpu_count() or 1)))
    try:
        for p in ports:
            await loadgen.wait_ready(f"http://127.0.0.1:{p}/mcp", "modern", timeout=30)
        url = f"http://127.0.0.1:{ports[0]}/mcp"
        if name.startswith("nginx"):
            conf_dir = Path(tempfile.mkdtemp(dir=tmp))
            names = dict(zip("abc", itertools.cycle(ports)))
            port = free_port()
            conf = nginx_conf(conf_dir, port, names)
            nginx = subprocess.Popen([NGINX, "-p", str(conf_dir), "-c", str(conf)], stderr=subprocess.DEVNULL)
            procs.append(nginx)
            url = f"http://127.0.0.1:{port}/mcp"
            await loadgen.wait_ready(url, "modern", timeout=30)
            from mcpbench.procstat import tree_pids

            watch["nginx"] = tree_pids(nginx.pid)
        rec = await measure(url, a.concurrency, a.duration, a.warmup, watch)
    finally:
        for proc in procs:
            stop(proc)
    rec["setup"] = name
    print(f"[{time.strftime('%H:%M:%S')}] {name:13s} {rec['calls_per_s']:8.0f} calls/s  server "
          f"{rec['server_cpu_us_per_call']:.0f} us/call ({rec['server_cpu_util']:.2f} cores)  "
          f"redis {rec['redis_cpu_us_per_call']:.2f} us/call  client {rec['client_cpu_util']:.2f} cores  errors {rec['errors']}", file=sys.stderr, flush=True)
    return rec


async def amain(a: argparse.Namespace) -> None:
    assert NGINX and REDIS, "needs nginx and redis-server"
    tmp = Path(tempfile.mkdtemp(prefix="mcpkit-scale-"))
    redis_port = free_port()
    redis = subprocess.Popen([REDIS, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--dir", str(tmp)], stdout=subprocess.DEVNULL)
    redis_url = f"redis://127.0.0.1:{redis_port}/0"
    records: list[dict[str, Any]] = []
    try:
        time.sleep(0.5)
        for _ in range(a.repeat):
            for name in ("direct", "direct+redis", "nginx-1", "nginx-3"):
                records.append(await setup(name, a, redis_url, redis.pid, tmp))
    finally:
        stop(redis)
    print(f"\nc={a.concurrency}, {a.duration:g} s windows, median of {a.repeat} on {os.cpu_count()} cores\n")
    print("| setup | calls/s | server CPU µs/call | server cores busy | nginx µs/call | redis µs/call |")
    print("|---|---|---|---|---|---|")
    for name in ("direct", "direct+redis", "nginx-1", "nginx-3"):
        recs = [r for r in records if r["setup"] == name]

        def med(key: str) -> float:
            values = [r[key] for r in recs if r.get(key) is not None]
            return statistics.median(values) if values else float("nan")

        nginx = med("nginx_cpu_us_per_call")
        print(f"| {name} | {med('calls_per_s'):.0f} | {med('server_cpu_us_per_call'):.0f} | "
              f"{med('server_cpu_util'):.2f} | {'-' if nginx != nginx else f'{nginx:.0f}'} | {med('redis_cpu_us_per_call'):.2f} |")
    out = HERE / "results" / "scale"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"scale-{time.strftime('%Y%m%d-%H%M%S')}.json").write_text(json.dumps(records, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    from mcpkit.server.request_state import generate_key

    a.key = generate_key()
    import uvloop

    uvloop.run(amain(a))


if __name__ == "__main__":
    main()
