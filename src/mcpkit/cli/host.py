"""`mcpkit host` (chat with an agent over the configured servers) and `mcpkit tools`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c", help="mcpServers JSON (default: .mcp.json, then Claude's config files)."
    ),
]
ServersOpt = Annotated[
    list[str] | None,
    typer.Option("--server", "-s", help="Use only these servers (repeatable).", show_default=False),
]

ModelOpt = Annotated[
    str | None, typer.Option("--model", "-m", help="anthropic:NAME or openai:NAME.")
]
AgentOpt = Annotated[
    str | None, typer.Option("--agent", "-a", help='An agent from the config\'s "agents".')
]
AuditOpt = Annotated[
    Path | None, typer.Option("--audit", help="Append one JSON line per tool call here.")
]
SystemOpt = Annotated[str | None, typer.Option("--system", help="System prompt.")]


def _load(config: Path | None) -> Any:
    from ..host import ConfigError, load_config

    try:
        return load_config(config)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc)) from None


def _agent_spec(
    config: Any, agent: str | None, servers: list[str] | None
) -> tuple[list[str] | None, str | None]:
    agents = config.raw.get("agents") or {}
    if agent is None:
        return servers, None
    if agent not in agents:
        raise typer.BadParameter(
            f"no agent {agent!r} in the configuration (have: {', '.join(agents) or 'none'})"
        )
    spec = agents[agent]
    return servers or spec.get("servers"), spec.get("system")


def tools(
    config: ConfigOpt = None,
    servers: ServersOpt = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Print the namespaced tool catalogue the model would see."""
    import asyncio

    from rich.console import Console
    from rich.table import Table

    from ..host import ConsentPolicy, Fleet
    from ..host.terminal import TerminalUI

    cfg = _load(config)
    console = Console()

    async def work() -> list[Any]:
        fleet = Fleet(cfg, TerminalUI(console), ConsentPolicy(), servers=servers)
        try:
            await fleet.start()
            return [
                (alias, fleet.lookup(alias)) for alias in sorted(t.name for t in fleet.catalog())
            ]
        finally:
            await fleet.close()

    rows = asyncio.run(work())
    if json_output:
        typer.echo(
            json.dumps(
                [
                    {
                        "name": a,
                        "server": t.link.name,
                        "tool": t.tool.name,
                        "inputSchema": t.schema.schema,
                    }
                    for a, t in rows
                ],
                indent=2,
            )
        )
        return
    table = Table("Name for the model", "Server", "Description")
    for alias, target in rows:
        table.add_row(
            alias,
            target.link.name + (" (trusted)" if target.link.config.trusted else ""),
            (target.tool.description or "").splitlines()[0] if target.tool.description else "",
        )
    console.print(table)


def host(
    prompt: Annotated[str | None, typer.Argument(help="One-shot: ask this and exit.")] = None,
    config: ConfigOpt = None,
    model: ModelOpt = None,
    agent: AgentOpt = None,
    servers: ServersOpt = None,
    allow: Annotated[
        list[str] | None,
        typer.Option("--allow", help="Always allow tools matching (e.g. shipping__*)."),
    ] = None,
    deny: Annotated[
        list[str] | None, typer.Option("--deny", help="Never allow tools matching.")
    ] = None,
    non_interactive: Annotated[
        bool,
        typer.Option("--non-interactive", help="Deny what would ask (the default without a TTY)."),
    ] = False,
    audit: AuditOpt = None,
    system: SystemOpt = None,
) -> None:
    """Chat with an agent that uses the configured MCP servers, asking before risky calls."""
    import asyncio
    import sys
    from dataclasses import replace

    from rich.console import Console
    from rich.prompt import Confirm, Prompt

    from ..host import ConsentPolicy, Host, make_model
    from ..host.chat import chat_turn
    from ..host.terminal import TerminalUI
    from .runtime import host_settings, print_servers, review_pins

    cfg = _load(config)
    chosen, agent_system = _agent_spec(cfg, agent, servers)
    settings = host_settings(config, cfg)
    if audit is not None:
        settings = replace(settings, audit=audit)
    interactive = not non_interactive and sys.stdin.isatty()
    try:
        llm = make_model(model)
    except (ValueError, ImportError) as exc:
        raise typer.BadParameter(str(exc)) from None
    console = Console()

    async def work() -> None:
        async with Host(
            cfg,
            model=llm,
            ui=TerminalUI(console),
            policy=ConsentPolicy(
                allow=list(allow or []), deny=list(deny or []), interactive=interactive
            ),
            servers=chosen,
            settings=settings,
        ) as h:
            session = h.agent(system=system or agent_system, name=agent)
            if prompt is not None:
                await chat_turn(session, prompt)
                return
            console.print(
                f"[dim]model {llm.name}; {len(h.fleet.catalog())} tools; /servers lists the "
                f"servers; @server:uri attaches a resource, /server:prompt key=value runs a "
                f"prompt; empty line or Ctrl-D to quit; server logs: {settings.log}[/]"
            )
            while True:
                if interactive:
                    await asyncio.to_thread(review_pins, console, h, Confirm.ask)
                try:
                    text = await asyncio.to_thread(
                        Prompt.ask, "[bold cyan]you[/]", console=console, default=""
                    )
                except EOFError:
                    return
                if text.strip() == "/servers":
                    print_servers(console, h)
                    continue
                if not text.strip():
                    return
                await chat_turn(session, text)  # also @server:uri and /server:prompt

    asyncio.run(work())
