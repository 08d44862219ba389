"""The Northwind demo: three real MCP servers (shipping over stdio, warehouse and returns over
Streamable HTTP) and three agents configured on one `mcpServers` file.

    python examples/northwind/demo.py            # what `make demo` runs

With no API key the agents run on `ScriptedModel`, a deterministic stand-in that replays fixed
tool calls (it is not AI). With ANTHROPIC_API_KEY or OPENAI_API_KEY set, the same conversation
goes to the real model instead (MCPKIT_ANTHROPIC_MODEL / MCPKIT_OPENAI_MODEL pick the model).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.rule import Rule

from mcpkit.client import Elicitation
from mcpkit.host import (
    ConsentPolicy,
    Host,
    ModelAdapter,
    PendingCall,
    TerminalUI,
    ToolSettings,
    load_config,
    make_model,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from script import (  # noqa: E402
    LOGISTICS_TURNS,
    PLANNER_TURNS,
    RETURNS_TURNS,
    SUPPORT_TURNS,
    logistics_model,
    planner_model,
    returns_model,
    support_model,
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def start_http_server(script: str, port: int) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(sys.executable, str(HERE / script), str(port))
    for _ in range(200):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return proc
        except OSError:
            if proc.returncode is not None:
                break
            await asyncio.sleep(0.05)
    if proc.returncode is None:
        proc.terminate()
        await proc.wait()
    raise RuntimeError(f"{script} did not start on port {port}")


def demo_consent(call: PendingCall) -> bool:
    """The demo's stand-in for the user at the consent prompt: allow, but never a cancellation."""
    return not call.tool.startswith("cancel")


def demo_elicitation(server: str, request: Elicitation) -> dict[str, Any]:
    """The demo's stand-in for the user filling a form: confirm."""
    return {"action": "accept", "content": {**request.defaults(), "confirm": True}}


async def run_agent(
    console: Console,
    config: Any,
    agents: dict[str, Any],
    name: str,
    model: ModelAdapter,
    turns: list[str],
) -> None:
    console.print(Rule(f"agent: {name} · model: {model.name}"))
    ui = TerminalUI(console, auto_confirm=demo_consent, auto_elicit=demo_elicitation)
    spec = agents[name]
    async with Host(
        config, model=model, ui=ui, policy=ConsentPolicy(), servers=spec["servers"]
    ) as host:
        settings = ToolSettings.from_config(spec.get("tools"), f"agent {name!r}: tools")
        agent = host.agent(system=spec["system"], tools=settings)
        offered = sorted(t.name for t in await agent.tools())
        if agent.catalog.deferred:
            console.print(
                f"[dim]{len(agent.catalog.selected)} tools are over this agent's budget of "
                f"{settings.budget} tokens: deferred loading; offered first: {', '.join(offered)}[/]"
            )
        else:
            console.print(f"[dim]tools offered to the model: {', '.join(offered)}[/]")
        for turn in turns:
            await agent.ask(turn)


@contextlib.asynccontextmanager
async def http_servers() -> AsyncIterator[dict[str, str]]:
    """The warehouse and returns servers on free ports; yields the environment the configs
    expand (and works from the repository root, where the configs' paths start)."""
    ports = {"WAREHOUSE_PORT": free_port(), "RETURNS_PORT": free_port()}
    env = {**os.environ, "PYTHON": sys.executable, **{k: str(v) for k, v in ports.items()}}
    procs: list[asyncio.subprocess.Process] = []
    try:
        for script, port in (
            ("warehouse_server.py", "WAREHOUSE_PORT"),
            ("returns_server.py", "RETURNS_PORT"),
        ):
            procs.append(await start_http_server(script, ports[port]))
        os.chdir(ROOT)
        yield env
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):  # Ctrl-C reached it already
                proc.terminate()
        await asyncio.gather(*(p.wait() for p in procs))


async def main() -> None:
    console = Console(force_terminal=sys.stdout.isatty() or None, width=110)
    async with http_servers() as env:
        config = load_config(HERE / "northwind.json", env=env)
        agents = json.loads((HERE / "northwind.json").read_text())["agents"]
        real = bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("OPENAI_API_KEY"))
        if not real:
            console.print(
                "[bold]No ANTHROPIC_API_KEY or OPENAI_API_KEY: the agents run on ScriptedModel, a "
                "deterministic stand-in that replays fixed tool calls (not AI).[/]"
            )
        plan = [
            ("support", support_model, SUPPORT_TURNS),
            ("logistics", logistics_model, LOGISTICS_TURNS),
            ("returns-desk", returns_model, RETURNS_TURNS),
            ("planner", planner_model, PLANNER_TURNS),
        ]
        for name, scripted, turns in plan:
            await run_agent(
                console, config, agents, name, make_model(None) if real else scripted(), turns
            )
        console.print(Rule("demo finished"))


if __name__ == "__main__":
    asyncio.run(main())
