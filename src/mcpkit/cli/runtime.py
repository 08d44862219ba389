"""What `mcpkit host`, `mcpkit pins` and `mcpkit audit` share: the host settings with the CLI's
defaults (pins, log file), and the chat's view of the servers (`/servers`, pin approvals)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from ..host import Host, HostConfig, HostSettings

ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c", help="mcpServers JSON (default: .mcp.json, then Claude's config files)."
    ),
]
HostOpt = Annotated[
    str | None, typer.Option(help="HTTP bind address [MCPKIT_HOST, else 127.0.0.1].")
]
PortOpt = Annotated[
    int | None,
    typer.Option(help="HTTP port, 1-65535 [MCPKIT_PORT, else 8000].", min=1, max=65535),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Do not print what is served.")]
PinsOpt = Annotated[
    Path | None,
    typer.Option("--pins", help="The tool pin file (default: the config's, else the state dir)."),
]


def fail(message: str) -> NoReturn:
    from .output import print_error

    print_error(message)
    raise typer.Exit(1)


def host_settings(config: Path | None, cfg: HostConfig | None = None) -> HostSettings:
    """The config's `"host"` settings; the pin, log and background task files default to the
    state directory."""
    from ..host import ConfigError, HostSettings, load_config
    from ..host.background_store import default_tasks_path
    from ..host.paths import state_path
    from ..host.pins import default_pins_path

    try:
        if cfg is None:
            cfg = load_config(config)
        settings = HostSettings.from_config(cfg)
    except ConfigError as exc:
        if config is not None or "no MCP configuration found" not in str(exc):
            fail(str(exc))
        settings = HostSettings()
    return replace(
        settings,
        pins=settings.pins or default_pins_path(),
        log=settings.log or state_path("host.log"),
        background=replace(
            settings.background, tasks=settings.background.tasks or default_tasks_path()
        ),
    )


def print_servers(console: Console, host: Host) -> None:
    """`/servers`: each server's state, tools, and what is withheld."""
    from rich.markup import escape
    from rich.table import Table

    from ..host import LinkState

    table = Table("Server", "Transport", "State", "Tools", "Detail")
    for link in host.fleet.links.values():
        withheld = f", {len(link.withheld)} withheld" if link.withheld else ""
        detail = (link.detail or "") if link.state is not LinkState.READY else ""
        if link.retry_in is not None and not link.state.up:
            detail += f" (next attempt in {link.retry_in:.2g} s)"
        table.add_row(
            escape(link.name),
            link.config.transport,
            link.state.value,
            f"{len(link.tools)}{withheld}" if link.state.up or link.idle else "-",
            escape(detail),
        )
    console.print(table)


def review_pins(console: Console, host: Host, ask: Callable[[str], bool]) -> None:
    """Before the user's next message: show what is withheld and ask to approve it (a new
    server's whole catalogue in one question, anything else tool by tool)."""
    from rich.markup import escape

    from ..host.quarantine import summary

    for batch in host.fleet.questions():
        first = batch[0]
        if len(batch) > 1 or (first.new and not host.fleet.pins_approved(first.server)):
            console.print(f"[yellow]new server >[/] {escape(first.server)}")
            for line in summary(batch):
                console.print(f"  {line}", markup=False, highlight=False)
            question = f"Approve the {len(batch)} tool(s) of the new server {first.server}?"
        else:
            name = escape(f"{first.server}/{first.tool}")
            console.print(f"[yellow]tool {'new' if first.new else 'changed'} >[/] {name}")
            if first.reason:
                console.print(f"held for review: {first.reason}", markup=False)
            console.print(first.diff(), markup=False, highlight=False)
            what = "new tool" if first.new else "new definition of"
            question = f"Approve the {what} {first.server}/{first.tool}?"
        if ask(question):
            for change in batch:
                host.fleet.approve(change)
            console.print("[green]approved[/]: offered from the next model round")
