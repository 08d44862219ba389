"""Profile mcpkit's client (mcpkit_client_bench.py) with py-spy against a server, and rank frames.

Starts the server pinned to CPU 0 (the harness's ``HttpServer``), runs the client under
``py-spy record --format raw`` pinned to CPU 1, then prints self time by library and the top
self-time frames (innermost Python frame of each sample; native code is charged to its caller).
Idle samples (the event loop waiting in epoll/select) are dropped unless ``--idle``.

    /tmp/venv-bench/bin/python /work/main/bench/profile_client.py --server mcpkit --concurrency 1 \\
        --seconds 10 --out /work/main/bench/results/profiles/client-mcpkit-c1
    /tmp/venv-bench/bin/python /work/main/bench/profile_client.py --analyze FILE.raw   # re-rank

Servers: ``mcpkit`` (bench_server.py), ``sdk`` (the anchor's sdk_server.py).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import re
import subprocess
import sys

HARNESS = os.environ.get("MCPBENCH_DIR", "/work/shared/bench")
sys.path.insert(0, HARNESS)

HERE = os.path.dirname(os.path.abspath(__file__))
MCPKIT_PY = os.environ.get("MCPKIT_PY", "/work/main/.venv/bin/python")
SDK_PY = os.environ.get("SDK_PY", "/tmp/venv-mcp/bin/python")
PY_SPY = os.environ.get("PY_SPY", "/tmp/venv-mcp/bin/py-spy")

SERVERS = {
    "mcpkit": [MCPKIT_PY, f"{HERE}/bench_server.py", "--transport", "http", "--port", "{port}"],
    "sdk": [SDK_PY, f"{HARNESS}/anchors/sdk_server.py", "--transport", "http", "--port", "{port}"],
}

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")
#: innermost frames that mean "the event loop is waiting for the socket" (not CPU)
_IDLE_FUNCS = {
    ("select", "selectors.py"),
    ("poll", "selectors.py"),
    ("_run_once", "base_events.py"),
}


def is_idle(func: str, path: str) -> bool:
    return (func.rsplit(".", 1)[-1], os.path.basename(path)) in _IDLE_FUNCS


def library(path: str) -> str:
    if "/bench/" in path:
        return "bench:" + os.path.basename(path)
    if "/mcpkit/" in path:
        return "mcpkit." + path.split("/mcpkit/", 1)[1].split("/")[0].removesuffix(".py")
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1].split("/")[0].removesuffix(".py")
    if "/lib/python3" in path:
        mod = path.split("/lib/python3", 1)[1].split("/", 1)[1]
        return "stdlib:" + mod.split("/")[0].removesuffix(".py")
    return os.path.basename(path)


def analyze(raw_path: str, top: int, idle: bool) -> str:
    self_fn: collections.Counter[str] = collections.Counter()
    self_lib: collections.Counter[str] = collections.Counter()
    incl_fn: collections.Counter[str] = collections.Counter()
    total = idle_n = 0
    with open(raw_path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            n = int(count)
            frames = stack.split(";")
            # py-spy raw: outermost first, innermost last; first entry may be the thread/process
            inner = frames[-1]
            m = _FRAME.match(inner)
            func, path = (m.group("func"), m.group("file")) if m else (inner, "?")
            if not idle and is_idle(func, path):
                idle_n += n
                continue
            total += n
            self_fn[f"{library(path)}:{func}"] += n
            self_lib[library(path)] += n
            seen = set()
            for fr in frames:
                m2 = _FRAME.match(fr)
                if not m2:
                    continue
                k = f"{library(m2.group('file'))}:{m2.group('func')}"
                if k not in seen:
                    seen.add(k)
                    incl_fn[k] += n
    out = [
        f"samples: {total} busy, {idle_n} idle (event loop waiting) dropped"
        if not idle
        else f"samples: {total}",
        "",
        "self time by library:",
        "| library | self % |",
        "|---|---:|",
    ]
    for lib, n in self_lib.most_common(25):
        out.append(f"| {lib} | {100 * n / total:.1f} |")
    out += ["", f"top {top} self-time frames:", "| frame | self % | inside % |", "|---|---:|---:|"]
    for k, n in self_fn.most_common(top):
        out.append(f"| {k} | {100 * n / total:.1f} | {100 * incl_fn[k] / total:.1f} |")
    mk = [(k, n) for k, n in incl_fn.most_common() if k.startswith(("mcpkit", "aiohttp"))][:top]
    out += [
        "",
        "mcpkit/aiohttp frames by inclusive time (async: outer frames unreliable):",
        "| frame | inside % | self % |",
        "|---|---:|---:|",
    ]
    for k, n in mk:
        out.append(f"| {k} | {100 * n / total:.1f} | {100 * self_fn[k] / total:.1f} |")
    return "\n".join(out)


async def record(a: argparse.Namespace) -> str:
    from mcpbench.run import HttpServer
    from mcpbench.targets import Launch

    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    srv = HttpServer(
        Launch(cmd=SERVERS[a.server], eras=["modern"]), a.port, 2, {0}, a.out + ".server.log"
    )
    srv.start()
    try:
        await srv.ready("modern")
        raw = a.out + ".raw"
        # The client runs for warmup + seconds + 2; py-spy attaches after the imports, the
        # connect and the warmup, so only steady-state calls are sampled.
        client = subprocess.Popen(
            [
                MCPKIT_PY,
                f"{HERE}/mcpkit_client_bench.py",
                "--url",
                srv.url,
                "--concurrency",
                str(a.concurrency),
                "--duration",
                str(a.seconds + 2),
                "--warmup",
                str(a.warmup),
                "--loop",
                a.loop,
            ],
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: os.sched_setaffinity(0, {1}),
        )
        await asyncio.sleep(a.warmup + 1.0)
        spy = [
            PY_SPY,
            "record",
            "--full-filenames",
            "--format",
            "raw",
            "-r",
            str(a.rate),
            "-d",
            str(int(a.seconds)),
            "-o",
            raw,
            "--pid",
            str(client.pid),
        ]
        if a.idle:
            spy.insert(2, "--idle")
        subprocess.run(
            spy, capture_output=True, text=True, preexec_fn=lambda: os.sched_setaffinity(0, {1})
        )
        out, _ = client.communicate()
        print(out.strip().splitlines()[-1] if out.strip() else f"client rc={client.returncode}")
        return raw
    finally:
        srv.stop()


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--server", choices=sorted(SERVERS), default="mcpkit")
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rate", type=int, default=500)
    ap.add_argument(
        "--warmup", type=float, default=2.0, help="client warmup before py-spy attaches"
    )
    ap.add_argument("--loop", choices=["asyncio", "uvloop"], default="asyncio")
    ap.add_argument("--port", type=int, default=18700)
    ap.add_argument("--idle", action="store_true", help="keep idle samples")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "profiles", "client-mcpkit-c1"))
    ap.add_argument("--analyze", default=None, help="only rank an existing .raw file")
    a = ap.parse_args()
    raw = a.analyze or asyncio.run(record(a))
    report = analyze(raw, a.top, a.idle)
    if not a.analyze:
        with open(a.out + ".txt", "w") as f:
            f.write(report + "\n")
    print(report)


if __name__ == "__main__":
    main()
