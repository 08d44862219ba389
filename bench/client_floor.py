"""Floors for mcpkit's client: the same closed loop (tools/call echo, reply checked) without
mcpkit, to split the client's CPU per call into "mcpkit", "aiohttp" and "asyncio + sockets".

  --mode aiohttp   one aiohttp.ClientSession (same connector settings as mcpkit's HttpTransport),
                   POST of a pre-encoded body with the same headers, orjson.loads, text check
  --mode raw       the harness's raw asyncio HTTP/1.1 client (/work/shared/bench/mcpbench/http1.py)
  --mode mcpkit    mcpkit.client.Client.call_tool (as mcpkit_client_bench.py)

    /work/main/.venv/bin/python client_floor.py --url http://127.0.0.1:8000/mcp --mode aiohttp

Prints one JSON line like mcpkit_client_bench.py. Pin it yourself (taskset -c 1).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from urllib.parse import urlsplit

import orjson

sys.path.insert(0, os.environ.get("MCPBENCH_DIR", "/work/shared/bench"))

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "floor", "version": "1"},
}
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "echo",
}


def body(rid: int, text: str) -> bytes:
    return orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}, "_meta": META},
        }
    )


def check(raw: bytes, rid: int, text: str) -> bool:
    msg = orjson.loads(raw)
    return msg.get("id") == rid and msg["result"]["content"][0]["text"] == text


async def make_call(a: argparse.Namespace):  # type: ignore[no-untyped-def]
    if a.mode == "aiohttp":
        import aiohttp

        http = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=16, keepalive_timeout=30),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
        )

        async def call(rid: int, text: str) -> bool:
            async with http.post(a.url, data=body(rid, text), headers=HEADERS) as resp:
                return resp.status == 200 and check(await resp.read(), rid, text)

        return call, http.close
    if a.mode == "raw":
        from mcpbench.http1 import Connection, RequestPrefix

        u = urlsplit(a.url)
        host, port = u.hostname or "127.0.0.1", u.port or 80
        prefix = RequestPrefix(host, port, u.path, list(HEADERS.items()))
        pool: list[Connection] = []

        async def call(rid: int, text: str) -> bool:
            conn = pool.pop() if pool else Connection(host, port)
            try:
                resp = await conn.send(prefix.with_body(body(rid, text)))
            finally:
                pool.append(conn)
            return resp.status == 200 and check(resp.body, rid, text)

        async def close() -> None:
            for c in pool:
                c.close()

        return call, close
    from mcpkit.client import Client

    client = Client(a.url, era="modern")
    await client.__aenter__()

    async def call(rid: int, text: str) -> bool:
        r = await client.call_tool("echo", {"text": text})
        return r.text == text and not r.is_error

    async def close() -> None:
        await client.__aexit__(None, None, None)

    return call, close


async def bench(a: argparse.Namespace) -> dict[str, object]:
    call, close = await make_call(a)
    t_measure = time.perf_counter() + a.warmup
    t_end = t_measure + a.duration
    lat: list[float] = []
    errors = 0
    marks: dict[str, float] = {}
    ids = iter(range(1, 1 << 62))

    async def worker() -> None:
        nonlocal errors
        pc = time.perf_counter
        while True:
            now = pc()
            if now >= t_end:
                return
            if "cpu0" not in marks and now >= t_measure:
                marks["cpu0"], marks["t0"] = sum(os.times()[:2]), now
            rid = next(ids)
            if not await call(rid, f"hello world {rid}"):
                errors += 1
                continue
            done = pc()
            if t_measure <= done <= t_end:
                lat.append(done - now)

    await asyncio.gather(*(worker() for _ in range(a.concurrency)))
    t1, cpu1 = time.perf_counter(), sum(os.times()[:2])
    await close()
    lat.sort()
    n, window, cpu = len(lat), t1 - marks["t0"], cpu1 - marks["cpu0"]
    return {
        "mode": a.mode,
        "loop": a.loop,
        "concurrency": a.concurrency,
        "requests": n,
        "errors": errors,
        "rps": round(n / window, 1),
        "p50_ms": round(lat[n // 2] * 1000, 4),
        "client_cpu_s_per_1k": round(cpu / n * 1000, 4),
        "client_cpu_util": round(cpu / window, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--mode", choices=["aiohttp", "raw", "mcpkit"], default="aiohttp")
    ap.add_argument("--loop", choices=["asyncio", "uvloop"], default="asyncio")
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--duration", type=float, default=4.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    a = ap.parse_args()
    if a.loop == "uvloop":
        import uvloop

        out = uvloop.run(bench(a))
    else:
        out = asyncio.run(bench(a))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
