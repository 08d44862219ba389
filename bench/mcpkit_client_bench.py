"""Client-side benchmark: calls/s of mcpkit's own client (``mcpkit.client.Client``).

Follows the harness's client contract (/work/shared/bench/README.md, "Adding a target"), modelled
on /work/shared/bench/anchors/sdk_client_bench.py: one ``Client`` (one aiohttp session with a
keep-alive pool, as an application would hold it) shared by ``--concurrency`` tasks, each awaiting
``call_tool("echo")`` in a closed loop for ``--warmup`` + ``--duration`` seconds. Every reply is
checked (``result.text`` equals the text sent, ``is_error`` false). Prints one JSON line.

    python mcpkit_client_bench.py --url http://127.0.0.1:8000/mcp --era modern --concurrency 1

Extra (not used by the harness entries):
  --loop uvloop      run on uvloop instead of the default asyncio loop (the SDK anchor uses asyncio)
  --cprofile FILE    cProfile the whole run in-process and dump stats to FILE (inflates CPU)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time

from mcpkit.client import Client


def pct(v: list[float], q: float) -> float | None:
    if not v:
        return None
    v = sorted(v)
    return v[max(0, min(len(v) - 1, round(q / 100 * len(v) + 0.5) - 1))]


async def bench(a: argparse.Namespace) -> dict[str, object]:
    t_connect = time.perf_counter()
    async with Client(a.url, era=a.era) as client:
        connect_s = time.perf_counter() - t_connect
        t0 = time.perf_counter()
        t_measure = t0 + a.warmup
        t_end = t_measure + a.duration
        lat: list[float] = []
        errors: list[str] = []
        total = 0
        marks: dict[str, float] = {}

        async def worker(w: int) -> None:
            nonlocal total
            i = 0
            pc = time.perf_counter
            while True:
                now = pc()
                if now >= t_end:
                    return
                if "cpu0" not in marks and now >= t_measure:
                    marks["cpu0"] = sum(os.times()[:2])
                    marks["t0"] = now
                i += 1
                text = f"hello world {w}-{i}"
                total += 1
                try:
                    r = await client.call_tool("echo", {"text": text})
                    got = r.text
                    if got != text or r.is_error:
                        errors.append(f"bad reply {got!r}")
                        continue
                except Exception as e:
                    errors.append(f"{type(e).__name__}: {e}")
                    if len(errors) > 100:
                        return
                    continue
                done = pc()
                if t_measure <= done <= t_end:
                    lat.append(done - now)

        await asyncio.gather(*(worker(w) for w in range(a.concurrency)))
        t1 = time.perf_counter()
        cpu1 = sum(os.times()[:2])
        era = client.era
    window = t1 - marks.get("t0", t_measure)
    n = len(lat)
    cpu = cpu1 - marks.get("cpu0", cpu1)
    return {
        "op": "tools/call:echo",
        "mode": era,
        "requests": n,
        "requests_total": total,
        "errors": len(errors),
        "error_samples": errors[:5],
        "duration_s": round(window, 3),
        "rps": round(n / window, 1) if window > 0 else None,
        "p50_ms": round(pct(lat, 50) * 1000, 4) if lat else None,  # type: ignore[operator]
        "p99_ms": round(pct(lat, 99) * 1000, 4) if lat else None,  # type: ignore[operator]
        "client_cpu_s_per_1k": round(cpu / n * 1000, 4) if n else None,
        "client_cpu_util": round(cpu / window, 3) if window > 0 else None,
        "connect_ms": round(connect_s * 1000, 2),
        "loop": a.loop,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--era", choices=["modern", "legacy"], default="modern")
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--loop", choices=["asyncio", "uvloop"], default="asyncio")
    ap.add_argument("--cprofile", default=None, help="dump cProfile stats of the run to this file")
    a = ap.parse_args()

    def run() -> dict[str, object]:
        if a.loop == "uvloop":
            import uvloop

            return uvloop.run(bench(a))
        return asyncio.run(bench(a))

    if a.cprofile:
        import cProfile

        prof = cProfile.Profile()
        out = prof.runcall(run)
        prof.dump_stats(a.cprofile)
    else:
        out = run()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
