"""`mcpkit host`: chat with an agent over the configured servers (`mcpkit tools` is in
tools.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .errors import CLIError, describe_model_error, did_you_mean

ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c", help="mcpServers JSON (default: .mcp.json, then Claude's config files)."
    ),
]
NoCacheOpt = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Keep no records of lazy servers: list them afresh (config: host.cache).",
    ),
]
ServersOpt = Annotated[
    list[str] | None,
    typer.Option("--server", "-s", help="Use only these servers (repeatable).", show_default=False),
]

ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="anthropic:NAME, openai:NAME, azure:DEPLOYMENT or gemini:NAME "
        '(default: the config\'s "model", then the first API key set).',
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="The model API's address, e.g. an OpenAI-compatible server's "
        "http://127.0.0.1:11434/v1 (default: the config's, then OPENAI_BASE_URL).",
        show_default=False,
    ),
]
AgentOpt = Annotated[
    str | None, typer.Option("--agent", "-a", help='An agent from the config\'s "agents".')
]
AuditOpt = Annotated[
    Path | None, typer.Option("--audit", help="Append one JSON line per tool call here.")
]
SystemOpt = Annotated[str | None, typer.Option("--system", help="System prompt.")]
AllowOpt = Annotated[
    list[str] | None,
    typer.Option("--allow", help="Always allow tools matching (e.g. shipping__*)."),
]
DenyOpt = Annotated[list[str] | None, typer.Option("--deny", help="Never allow tools matching.")]
#: The web UI's address and browser (`mcpkit ui`, `mcpkit dev`).
WebHostOpt = Annotated[
    str, typer.Option("--host", help="Address to listen on (loopback unless you mean it).")
]
WebPortOpt = Annotated[int, typer.Option("--port", "-p", help="Port (0: any free port).")]
OpenOpt = Annotated[bool, typer.Option("--open/--no-open", help="Open the page in your browser.")]


def _load(config: Path | None) -> Any:
    from ..host import ConfigError, load_config

    try:
        return load_config(config)
    except ConfigError as exc:
        raise CLIError(str(exc)) from None


def _model(spec: str | None, base_url: str | None = None, config: Any = None) -> Any:
    """The model adapter for `--model` / `--base-url` over the config's `"model"`, after checking
    its SDK and credentials (one line each)."""
    from ..host import ConfigError, make_model
    from ..host.models.choice import ModelChoice, options_of

    try:
        choice = ModelChoice.from_config(config).override(spec, base_url)
    except ConfigError as exc:
        raise CLIError(str(exc)) from None
    if choice.spec is None and choice.base_url is not None:
        raise CLIError(
            "--base-url needs a model name: add --model openai:NAME (or another provider)"
        )
    lacking = choice.missing()
    if lacking is not None:
        raise CLIError(lacking)
    try:
        return make_model(choice.spec, **options_of(choice))
    except ImportError as exc:
        provider = choice.provider or "anthropic"
        extra = "openai" if provider == "azure" else provider
        raise CLIError(
            f"the {provider} model needs its SDK ({exc}): pip install 'mcpkit[{extra}]'"
        ) from None
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    except Exception as exc:  # the SDK refused its configuration (e.g. a missing key)
        line = describe_model_error(exc)
        if line is None:
            raise
        raise CLIError(line) from None


def optional_model(spec: str | None, base_url: str | None = None, config: Any = None) -> Any:
    """`_model`, except that with no `--model`, no model in the config and no API key in the
    environment the answer is `NoModel` (`mcpkit ui`, `mcpkit dev`: the inspector and apps
    need no model)."""
    import os

    from ..host.models.choice import KEYS
    from ..host.models.none import NoModel

    configured = config is not None and config.raw.get("model") is not None
    keys = [k for provider in ("anthropic", "openai", "gemini") for k in KEYS[provider]]
    chosen = spec is not None or base_url is not None or configured
    if not chosen and not any(os.environ.get(k) for k in keys):
        return NoModel()
    return _model(spec, base_url, config)


class _Waiting:
    """The model, with a spinner and the elapsed time while each turn is computed."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name: str = model.name

    async def complete(self, system: str | None, history: list[Any], tools: list[Any]) -> Any:
        from .spinner import waiting

        with waiting(f"{self.name} is thinking"):
            return await self.model.complete(system, history, tools)


def _agent_spec(
    config: Any, agent: str | None, servers: list[str] | None
) -> tuple[list[str] | None, str | None]:
    agents = config.raw.get("agents") or {}
    if agent is None:
        return servers, None
    if agent not in agents:
        hint = did_you_mean(agent, agents) or f" (have: {', '.join(agents) or 'none'})"
        raise CLIError(f"no agent {agent!r} in the configuration{hint}")
    spec = agents[agent]
    return servers or spec.get("servers"), spec.get("system")


def _prepare(
    config: Path | None,
    agent: str | None,
    servers: list[str] | None,
    audit: Path | None,
    no_cache: bool = False,
) -> tuple[Any, list[str] | None, str | None, Any]:
    """What `host` and `ui` start from: the config, the servers and system prompt of the
    agent, and the host settings (with `--audit`, `--no-cache`)."""
    from dataclasses import replace

    from .runtime import host_settings

    cfg = _load(config)
    chosen, agent_system = _agent_spec(cfg, agent, servers)
    _check_servers(cfg, chosen)
    settings = host_settings(config, cfg)
    if audit is not None:
        settings = replace(settings, audit=audit)
    if no_cache:
        settings = replace(settings, cache=False)
    return cfg, chosen, agent_system, settings


def _check_servers(config: Any, servers: list[str] | None) -> None:
    names = list(config.servers)
    for name in servers or []:
        if name not in names:
            hint = did_you_mean(name, names) or f" (have: {', '.join(names) or 'none'})"
            raise CLIError(f"no server {name!r} in the configuration{hint}")


def host(
    prompt: Annotated[str | None, typer.Argument(help="One-shot: ask this and exit.")] = None,
    config: ConfigOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    agent: AgentOpt = None,
    servers: ServersOpt = None,
    allow: AllowOpt = None,
    deny: DenyOpt = None,
    non_interactive: Annotated[
        bool,
        typer.Option("--non-interactive", help="Deny what would ask (the default without a TTY)."),
    ] = False,
    audit: AuditOpt = None,
    system: SystemOpt = None,
    no_cache: NoCacheOpt = False,
    log_level: Annotated[
        str | None,
        typer.Option(
            "--log-level",
            "-l",
            help="Ask the servers for their log messages at this level and above.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Chat with an agent that uses the configured MCP servers, asking before risky calls."""
    import asyncio
    import sys

    from rich.console import Console

    from ..host import ConsentPolicy, Host
    from ..host.terminal import TerminalUI

    _check_log_level(log_level)
    cfg, chosen, agent_system, settings = _prepare(config, agent, servers, audit, no_cache)
    interactive = not non_interactive and sys.stdin.isatty()
    llm = _Waiting(_model(model, base_url, cfg))
    console = Console()

    async def work() -> int:
        policy = ConsentPolicy(
            allow=list(allow or []), deny=list(deny or []), interactive=interactive
        )
        h = Host(
            cfg, model=llm, ui=TerminalUI(console), policy=policy, servers=chosen, settings=settings
        )
        for link in h.fleet.links.values():
            link.log_level = log_level
        async with h:
            session = h.agent(system=system or agent_system, name=agent)
            if prompt is not None:
                return 0 if await _turn(session, prompt) else 1
            console.print(_greeting(llm.name, h, settings.log))
            return await _chat(console, h, session, interactive)

    if asyncio.run(work()):
        raise typer.Exit(1)


def _check_log_level(level: str | None) -> None:
    from ..protocol.meta import LOG_LEVELS

    if level is not None and level not in LOG_LEVELS:
        raise CLIError(f"--log-level {level!r}: use one of {', '.join(LOG_LEVELS)}")


async def _turn(session: Any, text: str) -> bool:
    """One turn; a model API failure is one line and the conversation stays as it was."""
    from ..host.chat import chat_turn
    from .output import print_error

    kept = len(session.history)
    try:
        await chat_turn(session, text)  # also @server:uri and /server:prompt
    except Exception as exc:
        line = describe_model_error(exc)
        if line is None:
            raise
        del session.history[kept:]
        print_error(f"{line} (the conversation is kept: ask again)")
        return False
    return True


def _greeting(model: str, h: Any, log: Any) -> str:
    """The chat's first line: the model, what it can use, how to use the chat."""
    tools, servers = len(h.fleet.catalog()), len(h.fleet.links)
    return (
        f"[dim]{model} with {tools} tool{'' if tools == 1 else 's'} from "
        f"{servers} server{'' if servers == 1 else 's'}; "
        f"/servers lists them; @server:uri attaches a resource, /server:prompt key=value "
        f"runs a prompt; /tasks and /cancel TASK for background calls; "
        f"an empty line or Ctrl-D ends the chat; "
        f"server logs: {log}[/]"
    )


async def _chat(console: Any, h: Any, session: Any, interactive: bool) -> int:
    """Turns until an empty line or Ctrl-D (exit status 0); pins are reviewed before each."""
    import asyncio

    from rich.prompt import Confirm, Prompt

    from .runtime import print_servers, review_pins

    while True:
        if interactive:
            await asyncio.to_thread(review_pins, console, h, Confirm.ask)
        h.ui.reading = True  # a background task's question waits for Enter meanwhile
        try:
            text = await asyncio.to_thread(
                Prompt.ask, "\n[bold cyan]you >[/]", console=console, show_default=False
            )
        except EOFError:
            return 0
        finally:
            h.ui.reading = False
        if h.ui.answer_waiting() and not text.strip():
            continue
        if text.strip() == "/servers":
            print_servers(console, h)
            continue
        if not (text or "").strip():
            return 0
        await _turn(session, text)
