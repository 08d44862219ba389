"""A proxied echo call vs a direct one, over Streamable HTTP and over stdio: calls/s and the
server CPU per call (milliseconds of user+system time of the server processes, from
/proc/PID/stat), so the proxy's own cost per call is the difference.

    .venv/bin/python bench/gateway_bench.py [--duration 5] [--concurrency 1,16] [--micro] [--json F]

- HTTP: the client → `bench_server.py` over HTTP (direct), or the client → a `proxy()` of it
  over HTTP (the proxy itself talks HTTP to the backend).
- stdio: the client spawns `bench_server.py --stdio` (direct), or spawns a `proxy()` served
  over stdio that spawns `bench_server.py --stdio` itself.

The load comes from mcpkit's own client in this process (its CPU is not counted). `--micro`:
the same in one process over the in-memory transport (pure CPU, best of rounds): a direct
call, a call through a hand-written forwarding tool (one more server and client hop, nothing
else), and through `proxy()`: the last two differ by what the proxy adds beyond the hop. Also a
harness target (`targets.json`: `mcpkit-gateway`): `--serve http --port N` runs the proxy in
front of its own `bench_server.py` child, for the shared harness to compare with the SDK.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BACKEND = [sys.executable, str(HERE / "bench_server.py")]
TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of these processes so far."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def children(pid: int) -> list[int]:
    """`pid` and its descendants (the proxy's backend)."""
    found = [pid]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if ppid == pid:
                    found += children(int(entry.name))
    return found


async def wait_port(port: int) -> None:
    for _ in range(400):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
        else:
            writer.close()
            return
    raise RuntimeError(f"nothing listens on {port}")


@contextlib.asynccontextmanager
async def process(*argv: str) -> AsyncIterator[asyncio.subprocess.Process]:
    proc = await asyncio.create_subprocess_exec(*argv, stderr=asyncio.subprocess.DEVNULL)
    try:
        yield proc
    finally:
        for pid in reversed(children(proc.pid)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 15)
        await proc.wait()


async def load(target: Any, concurrency: int, duration: float, warmup: float) -> tuple[int, float]:
    """(calls, server CPU seconds) in the measured window."""
    from mcpkit.client import Client

    async with Client(target, stderr="discard", cache=False, tasks=False) as client:
        spawned = getattr(client.transport, "_proc", None)  # a stdio server: ours to watch
        stop = time.perf_counter() + warmup + duration
        counted = 0
        counting = False

        async def caller(n: int) -> None:
            nonlocal counted
            i = 0
            while time.perf_counter() < stop:
                i += 1
                text = f"hello world {n}-{i}"
                result = await client.call_tool("echo", {"text": text})
                assert result.text == text
                if counting:
                    counted += 1

        workers = [asyncio.create_task(caller(n)) for n in range(concurrency)]
        await asyncio.sleep(warmup)
        pids = children(spawned.pid) if spawned is not None else SERVER_PIDS
        before, counting = cpu_seconds(pids), True
        await asyncio.sleep(duration)
        counting = False
        after = cpu_seconds(pids)
        await asyncio.gather(*workers)
        return counted, after - before


SERVER_PIDS: list[int] = []


async def measure_http(concurrency: int, duration: float, warmup: float) -> dict[str, Any]:
    port = free_port()
    async with process(*BACKEND, "--transport", "http", "--port", str(port)) as backend:
        await wait_port(port)
        url = f"http://127.0.0.1:{port}/mcp"
        SERVER_PIDS[:] = [backend.pid]
        direct = await load(url, concurrency, duration, warmup)
        front = free_port()
        serve = [sys.executable, __file__, "--serve-proxy", url, "--port", str(front)]
        async with process(*serve) as proxy_proc:
            await wait_port(front)
            SERVER_PIDS[:] = [backend.pid, proxy_proc.pid]
            proxied = await load(f"http://127.0.0.1:{front}/mcp", concurrency, duration, warmup)
            SERVER_PIDS[:] = [proxy_proc.pid]
    return {"direct": direct, "proxied": proxied}


async def measure_stdio(concurrency: int, duration: float, warmup: float) -> dict[str, Any]:
    SERVER_PIDS.clear()
    direct = await load([*BACKEND, "--stdio"], concurrency, duration, warmup)
    proxied = await load(
        [sys.executable, __file__, "--serve-proxy", "stdio"], concurrency, duration, warmup
    )
    return {"direct": direct, "proxied": proxied}


def report(transport: str, concurrency: int, runs: dict[str, Any], duration: float) -> dict[str, Any]:
    (dc, dcpu), (pc, pcpu) = runs["direct"], runs["proxied"]
    direct_ms = 1000 * dcpu / max(dc, 1)
    proxied_ms = 1000 * pcpu / max(pc, 1)
    print(
        f"{transport:5} c={concurrency:<3} direct {dc / duration:8.0f} calls/s "
        f"{direct_ms:6.3f} ms CPU/call | proxied {pc / duration:8.0f} calls/s "
        f"{proxied_ms:6.3f} ms CPU/call (proxy + backend) | overhead "
        f"{proxied_ms - direct_ms:6.3f} ms CPU/call",
        flush=True,
    )
    return {
        "transport": transport, "concurrency": concurrency,
        "direct_calls_s": round(dc / duration), "proxied_calls_s": round(pc / duration),
        "direct_cpu_ms": round(direct_ms, 4), "proxied_cpu_ms": round(proxied_ms, 4),
        "overhead_cpu_ms": round(proxied_ms - direct_ms, 4),
    }


async def micro(n: int, rounds: int) -> dict[str, Any]:
    """µs per echo call, in process: direct, a hand-written forwarder, proxy()."""
    sys.path.insert(0, str(HERE))
    from bench_server import build

    from mcpkit import Server
    from mcpkit.client import Client
    from mcpkit.gateway import proxy

    async def timed(target: Any) -> float:
        async with Client(target, cache=False, tasks=False) as client:
            for i in range(300):
                await client.call_tool("echo", {"text": f"warm {i}"})
            best = float("inf")
            for _ in range(rounds):
                start = time.perf_counter()
                for i in range(n):
                    await client.call_tool("echo", {"text": f"hello world {i}"})
                best = min(best, (time.perf_counter() - start) / n * 1e6)
            return best

    backend = build(2)
    inner = Client(backend, cache=False, tasks=False)
    await inner.__aenter__()
    forwarder = Server("forwarder")

    @forwarder.tool()
    async def echo(text: str) -> str:
        """Echo, through the backend."""
        return (await inner.call_tool("echo", {"text": text})).text

    front = proxy(backend)
    await front.startup()
    direct, hop, proxied = await timed(backend), await timed(forwarder), await timed(front)
    await front.shutdown()
    await inner.close()
    print(
        f"in process, µs/call (best of {rounds} x {n}): direct {direct:.1f}, hand-written "
        f"forwarder {hop:.1f}, proxy() {proxied:.1f}; the proxy over the bare hop: "
        f"{proxied - hop:+.1f} µs"
    )
    return {"n": n, "rounds": rounds, "direct_us": round(direct, 1), "forwarder_us": round(hop, 1),
            "proxy_us": round(proxied, 1)}


def serve_proxy(target: str, port: int | None, tools: int | None = None) -> None:
    """The proxy process: in front of `target` (a URL), or of a stdio backend ("stdio")."""
    import logging

    from mcpkit.gateway import proxy

    logging.basicConfig(level=logging.WARNING)
    if target == "stdio":
        proxy([*BACKEND, "--stdio"]).run("stdio")
    elif target == "http-child":  # the harness target: its own backend over stdio
        extra = ["--tools", str(tools)] if tools else []
        proxy([*BACKEND, "--stdio", *extra]).run("http", port=port)
    else:
        proxy(target).run("http", port=port)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--concurrency", default="1,16")
    parser.add_argument("--transports", default="http,stdio")
    parser.add_argument("--serve-proxy", help=argparse.SUPPRESS)
    parser.add_argument("--serve", choices=["http"], help="harness target: proxy over HTTP")
    parser.add_argument("--port", type=int)
    parser.add_argument("--micro", action="store_true", help="in process, µs per call")
    parser.add_argument("-n", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tools", type=int, help=argparse.SUPPRESS)  # the harness passes it
    parser.add_argument("--json", help="write the figures here (with --micro: both parts)")
    args = parser.parse_args()
    if args.serve_proxy:
        serve_proxy(args.serve_proxy, args.port)
        return
    if args.serve:
        serve_proxy("http-child", args.port, args.tools)
        return
    import uvloop

    out: dict[str, Any] = {"duration": args.duration, "runs": []}
    if args.micro:
        out["micro"] = uvloop.run(micro(args.n, args.rounds))
        if not args.json:
            return
    for transport in args.transports.split(","):
        for c in (int(x) for x in args.concurrency.split(",") if x):
            measure = measure_http if transport == "http" else measure_stdio
            runs = uvloop.run(measure(c, args.duration, args.warmup))
            out["runs"].append(report(transport, c, runs, args.duration))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
