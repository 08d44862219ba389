"""The host's overhead per tool call: one agent turn in which a scripted model asks for one
`echo` call and then answers, against the bare client call it makes.

    python host_bench.py [--calls 2000] [--rounds 5] [--json results/host.json]

Both sides drive the same server (`bench_server.py --stdio`, a child process) one call at a
time from this process: the bare side with `mcpkit.client.Client.call_tool`, the host side
with `Host(...).agent().ask(...)` and a `ScriptedModel` (no network, no AI) whose steps are
"call echo" then "answer". Public API only (`mcpkit.host`, `mcpkit.client`), so the figure
follows the host's call pipeline whatever its inside looks like. Reported per call, best of
`--rounds` (a busy machine only adds): wall µs and this process's CPU µs (the server's CPU
is not counted, it is the same on both sides). The difference is what the host adds: a model
round's bookkeeping (tool specs, history), name resolution, consent, host-owned arguments,
deadline, retry, output budget, audit and UI events. The server is a child on stdio because
the host's config names servers by command or URL; loopback and bounded (`--calls`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVER = [sys.executable, str(HERE / "bench_server.py"), "--stdio"]
#: Turns per agent: a fresh agent (short history) every so many, made outside the clock.
TURNS_PER_AGENT = 20


class QuietUI:
    """A `HostUI` that shows nothing and allows everything (the server is trusted anyway)."""

    def user(self, text: str) -> None: ...
    def assistant(self, text: str) -> None: ...
    def tool_call(self, call: Any, decision: Any) -> None: ...
    def tool_result(self, call: Any, result: Any) -> None: ...
    def progress(self, call: Any, progress: float, total: float | None, message: str | None) -> None: ...
    def server_state(self, change: Any) -> None: ...
    def warn(self, text: str) -> None: ...
    def info(self, text: str) -> None: ...

    async def confirm(self, call: Any) -> bool:
        return True

    async def elicit(self, server: str, request: Any) -> dict[str, Any]:
        return {"action": "decline"}


def script(turns: int) -> Any:
    """A ScriptedModel for `turns` turns: each asks for one echo call, then answers."""
    from mcpkit.host import AssistantMessage, ScriptedModel, ToolCall

    def call(history: list[Any], tools: list[Any]) -> Any:
        name = next(t.name for t in tools if t.name.endswith("echo"))
        return AssistantMessage("", [ToolCall(f"c{len(history)}", name, {"text": "hello world"})])

    def answer(history: list[Any], tools: list[Any]) -> Any:
        return AssistantMessage("done")

    return ScriptedModel([call, answer] * turns)


def timed_best(samples: list[tuple[float, float]]) -> tuple[float, float]:
    """(wall µs, CPU µs) per call: the best round of each."""
    return min(w for w, _ in samples), min(c for _, c in samples)


async def bare(calls: int, rounds: int) -> tuple[float, float]:
    from mcpkit.client import Client

    samples = []
    async with Client(SERVER, stderr="discard", cache=False, tasks=False) as client:
        for _ in range(200):
            await client.call_tool("echo", {"text": "warm"})
        for _ in range(rounds):
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(calls):
                result = await client.call_tool("echo", {"text": "hello world"})
                assert result.text == "hello world", result
            samples.append(
                ((time.perf_counter() - wall) / calls * 1e6, (time.process_time() - cpu) / calls * 1e6)
            )
    return timed_best(samples)


async def hosted(calls: int, rounds: int) -> tuple[float, float]:
    from mcpkit.host import Host, ToolResults, parse_config

    cfg = parse_config(
        {"mcpServers": {"bench": {"command": SERVER[0], "args": SERVER[1:], "trusted": True}}}
    )
    warm = 40
    model = script(warm + calls * rounds + TURNS_PER_AGENT)
    samples = []
    async with Host(cfg, model=model, ui=QuietUI()) as host:
        agent = host.agent()
        for _ in range(warm):
            await agent.ask("echo hello world")
        last = next(m for m in reversed(agent.history) if isinstance(m, ToolResults))
        assert not last.results[0].is_error, last
        for _ in range(rounds):
            wall = cpu = 0.0
            done = 0
            while done < calls:
                agent = host.agent()
                n = min(TURNS_PER_AGENT, calls - done)
                w, c = time.perf_counter(), time.process_time()
                for _ in range(n):
                    assert await agent.ask("echo hello world") == "done"
                wall += time.perf_counter() - w
                cpu += time.process_time() - c
                done += n
            samples.append((wall / calls * 1e6, cpu / calls * 1e6))
    return timed_best(samples)


async def conduct(calls: int, rounds: int) -> dict[str, Any]:
    b_wall, b_cpu = await bare(calls, rounds)
    h_wall, h_cpu = await hosted(calls, rounds)
    return {
        "calls": calls, "rounds": rounds, "transport": "stdio",
        "bare_wall_us": round(b_wall, 1), "bare_cpu_us": round(b_cpu, 1),
        "host_wall_us": round(h_wall, 1), "host_cpu_us": round(h_cpu, 1),
        "overhead_wall_us": round(h_wall - b_wall, 1), "overhead_cpu_us": round(h_cpu - b_cpu, 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=2000, help="calls per round (bounded)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    import uvloop

    result = uvloop.run(asyncio.wait_for(conduct(a.calls, a.rounds), 600))
    print(json.dumps(result))
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
