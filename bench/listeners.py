"""Many listen streams, one change: what each stream costs a server, and how fast one change
reaches all of them.

    python listeners.py --streams 10000 --out results/listeners.json   # mcpkit and the SDK

For each server (mcpkit under `mcpkit run` with default settings; the official SDK mcp 2.3.0
as the harness anchor serves it, on its defaults and as `sdk-raised` with its listen limit
raised to `--streams`), one run: start the server, open `--streams` 2026-07-28
`subscriptions/listen` streams (each on its own connection, each waiting for its
acknowledgement), read the server's RSS, call the tool `change` (it announces a tool-list
change), and time when each stream receives `notifications/tools/list_changed` (p50 and
p100 from the call). Streams the server refuses are counted, not retried.

The load stays on loopback and is bounded: `--workers` processes (each raises its own
descriptor limit), each opening its share from its own source address (127.0.0.2, .3, ...:
one address's ephemeral ports are not a limit) with at most `--opening` connections being
opened at once, and every wait has a deadline (`--timeout`). Clocks: CLOCK_MONOTONIC, one
for every process on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
VENVS = os.environ.get("BENCH_VENVS", os.path.join(HERE, ".venvs"))
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "listeners-bench", "version": "1"},
}


def request(port: int, method: str, params: dict[str, Any], name: str | None = None) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                       "params": {**params, "_meta": META}}).encode()
    head = [f"POST /mcp HTTP/1.1", f"host: 127.0.0.1:{port}", "content-type: application/json",
            "accept: application/json, text/event-stream", "mcp-protocol-version: 2026-07-28",
            f"mcp-method: {method}", f"content-length: {len(body)}"]
    if name is not None:
        head.append(f"mcp-name: {name}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def raise_fd_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


# -- a worker process: opens its streams, reports ready, then the arrival times ------------------


async def open_stream(port: int, source: str, gate: asyncio.Semaphore, deadline: float) -> Any:
    """A listen stream acknowledged: (reader, writer), or the HTTP status that refused it."""
    async with gate:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0)), deadline)
        writer.write(request(port, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}))
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), deadline)
        status = int(head.split(b" ", 2)[1])
        if status != 200:
            writer.close()
            return status
        seen = head.split(b"\r\n\r\n", 1)[1]
        while b"subscriptions/acknowledged" not in seen:  # (chunked or not, \n or \r\n events)
            if b'"error"' in seen:  # refused inside the stream (the SDK's limit)
                writer.close()
                return 200
            data = await asyncio.wait_for(reader.read(65536), deadline)
            if not data:
                writer.close()
                return 200
            seen += data
        return reader, writer


async def arrival(reader: asyncio.StreamReader, deadline: float) -> float:
    seen = b""
    while True:  # the bytes after the acknowledgement; keep-alive comments may come first
        data = await asyncio.wait_for(reader.read(65536), deadline)
        if not data:
            raise EOFError("the stream ended")
        seen = seen[-64:] + data
        if b"tools/list_changed" in seen:
            return time.monotonic()


async def worker(port: int, count: int, source: str, opening: int, timeout: float) -> None:
    raise_fd_limit()
    gate = asyncio.Semaphore(opening)
    opened = await asyncio.gather(*(open_stream(port, source, gate, timeout) for _ in range(count)),
                                  return_exceptions=True)
    streams = [s for s in opened if isinstance(s, tuple)]
    refused = [s if isinstance(s, int) else type(s).__name__ for s in opened if not isinstance(s, tuple)]
    print(json.dumps({"ready": len(streams), "refused": refused[:3], "refused_n": len(refused)}), flush=True)
    times = await asyncio.gather(*(arrival(r, timeout) for r, _ in streams), return_exceptions=True)
    got = [t for t in times if isinstance(t, float)]
    print(json.dumps({"arrivals": got, "missed": len(times) - len(got)}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until told to stop
    for _, w in streams:
        w.close()


# -- the conductor -------------------------------------------------------------------------------


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def server_argv(name: str, port: int, streams: int) -> list[str]:
    if name == "mcpkit":
        py = os.environ.get("MCPKIT_PY", os.path.join(VENVS, "mcpkit/bin/python"))
        return [py, "-m", "mcpkit", "run", os.path.join(HERE, "listen_server.py"), "--transport", "http",
                "--port", str(port), "--quiet"]
    py = os.environ.get("SDK_PY", os.path.join(VENVS, "sdk/bin/python"))
    argv = [py, os.path.join(HERE, "sdk_listen_server.py"), "--port", str(port)]
    if name == "sdk-raised":  # its listen limit (1,024 by default) raised to the streams opened
        argv += ["--max-subscriptions", str(streams)]
    return argv


async def wait_port(port: int, proc: asyncio.subprocess.Process, timeout: float) -> None:
    end = time.monotonic() + timeout
    while True:
        try:
            _, w = await asyncio.open_connection("127.0.0.1", port)
            w.close()
            return
        except OSError:
            if proc.returncode is not None or time.monotonic() > end:
                raise RuntimeError(f"server on {port} did not start") from None
            await asyncio.sleep(0.1)


async def call_change(port: int, timeout: float) -> float:
    """Send `tools/call change`; the time it was sent."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    sent = time.monotonic()
    writer.write(request(port, "tools/call", {"name": "change", "arguments": {}}, name="change"))
    await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    writer.close()
    return sent


async def measure(name: str, a: argparse.Namespace, port: int) -> dict[str, Any]:
    server = await asyncio.create_subprocess_exec(*server_argv(name, port, a.streams), stderr=asyncio.subprocess.PIPE)
    workers: list[asyncio.subprocess.Process] = []
    try:
        await wait_port(port, server, 60)
        await asyncio.sleep(1)
        base = rss_kib(server.pid)
        share = [a.streams // a.workers + (1 if i < a.streams % a.workers else 0) for i in range(a.workers)]
        began = time.monotonic()
        for i, n in enumerate(share):
            argv = [sys.executable, __file__, "--worker", str(port), str(n), f"127.0.0.{2 + i}",
                    str(a.opening), str(a.timeout)]
            workers.append(await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE))
        ready = [json.loads(await asyncio.wait_for(w.stdout.readline(), a.timeout * 2)) for w in workers]
        open_s = time.monotonic() - began
        opened = sum(r["ready"] for r in ready)
        await asyncio.sleep(1)  # settle
        rss = rss_kib(server.pid)
        sent = await call_change(port, a.timeout)
        done = [json.loads(await asyncio.wait_for(w.stdout.readline(), a.timeout * 2)) for w in workers]
        lat = sorted((t - sent) * 1000 for d in done for t in d["arrivals"])
        return {
            "server": name, "streams": a.streams, "opened": opened,
            "refused": sum(r["refused_n"] for r in ready), "refused_sample": [r["refused"] for r in ready],
            "open_seconds": round(open_s, 2), "rss_base_mib": round(base / 1024, 1),
            "rss_mib": round(rss / 1024, 1),
            "rss_per_stream_kib": round((rss - base) / opened, 1) if opened else None,
            "notified": len(lat), "missed": sum(d["missed"] for d in done),
            "fanout_p50_ms": round(statistics.median(lat), 1) if lat else None,
            "fanout_p100_ms": round(lat[-1], 1) if lat else None,
        }
    finally:
        for w in workers:
            if w.stdin is not None:
                w.stdin.close()
        for w in workers:
            try:
                await asyncio.wait_for(w.wait(), 30)
            except TimeoutError:
                w.kill()
        server.terminate()
        try:
            await asyncio.wait_for(server.wait(), 60)
        except TimeoutError:
            server.kill()


def markdown(results: dict[str, Any]) -> list[str]:
    """The section of docs/performance.md (perf_report.py)."""
    out = ["## Listen streams (one change, many listeners)", "",
           f"`listeners.py`: {results['streams']:,} `subscriptions/listen` streams (2026-07-28), each on its own "
           "loopback connection, against each server on its default settings (mcpkit under `mcpkit run`); then "
           "one `tools/call change` announces a tool-list change. RSS is the server's growth over its idle RSS, "
           "per stream; fan-out is from the call to each stream's notification. `sdk` refuses listen streams past "
           "its default limit (1,024); `sdk-raised` has that limit raised to the streams opened.", "",
           "| server | streams open | refused | RSS per stream | fan-out p50 | fan-out p100 | notified |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for r in results["results"]:
        out.append(f"| {r['server']} | {r['opened']:,} | {r['refused']:,} | {r['rss_per_stream_kib']} KiB | "
                   f"{r['fanout_p50_ms']} ms | {r['fanout_p100_ms']} ms | {r['notified']:,} |")
    return out


async def conduct(a: argparse.Namespace) -> dict[str, Any]:
    raise_fd_limit()
    results = []
    for i, name in enumerate(a.servers.split(",")):
        results.append(await measure(name, a, a.port + i))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    return {"streams": a.streams, "workers": a.workers, "results": results}


def main() -> int:
    if sys.argv[1:2] == ["--worker"]:
        port, count, source, opening, timeout = sys.argv[2:7]
        asyncio.run(worker(int(port), int(count), source, int(opening), float(timeout)))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", default="mcpkit,sdk,sdk-raised")
    ap.add_argument("--streams", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--opening", type=int, default=64, help="connections being opened at once, per worker")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--port", type=int, default=24900)
    ap.add_argument("--out")
    ap.add_argument("--markdown", action="store_true", help="print the docs section too")
    a = ap.parse_args()
    results = asyncio.run(conduct(a))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)
    if a.markdown:
        print("\n".join(markdown(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
