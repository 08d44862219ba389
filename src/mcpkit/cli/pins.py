"""`mcpkit pins list|diff|approve`: the tool definitions the host pinned, and the changed ones
it withholds from the model until you approve them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .provenance import provenance
from .runtime import ConfigOpt, PinsOpt, fail, host_settings

if TYPE_CHECKING:
    from ..host.pins import ToolPins

app = typer.Typer(
    name="pins",
    help="Review tool definitions that changed since they were pinned, and approve them.",
    no_args_is_help=True,
)

ServerArg = Annotated[str | None, typer.Argument(help="Only this server.", show_default=False)]
ToolArg = Annotated[str | None, typer.Argument(help="Only this tool.", show_default=False)]


def _pins(config: Path | None, pins: Path | None) -> ToolPins:
    from ..host.pins import ToolPins

    store = ToolPins(pins or host_settings(config).pins)
    if store.error is not None:
        fail(f"cannot read the pin file {store.error}; fix or move it, then try again")
    return store


@app.command("list")
def list_(config: ConfigOpt = None, pins: PinsOpt = None) -> None:
    """Every pinned tool, and whether its server now sends a changed definition."""
    from rich.table import Table

    from .output import stdout_console

    entries = _pins(config, pins).entries()
    if not entries:
        typer.echo("no pinned tools yet (the host pins each tool the first time it sees it)")
        return
    table = Table("Server", "Tool", "Pinned", "Status")
    for e in entries:
        status = f"[yellow]changed ({e.pending}): awaiting approval[/]" if e.pending else "pinned"
        table.add_row(e.server, e.tool, e.digest, status)
    stdout_console().print(table)


@app.command()
def diff(
    server: ServerArg = None, tool: ToolArg = None, config: ConfigOpt = None, pins: PinsOpt = None
) -> None:
    """Show what changed (description and schemas), pinned → now."""
    changes = _pins(config, pins).pending(server, tool)
    if not changes:
        typer.echo("no changed tools await approval")
        return
    for change in changes:
        typer.echo(change.diff())


@app.command()
def approve(
    server: Annotated[str, typer.Argument(help="The server whose changes you reviewed.")],
    tool: ToolArg = None,
    config: ConfigOpt = None,
    pins: PinsOpt = None,
) -> None:
    """Pin the changed definitions of a server (or one tool): the host offers them again."""
    approved = _pins(config, pins).approve(server, tool)
    if not approved:
        what = f"{server}/{tool}" if tool else server
        fail(f"nothing to approve for {what} (see: mcpkit pins list)")
    for change in approved:
        typer.echo(f"approved {change.server}/{change.tool} ({change.digest})")


app.command("provenance")(provenance)  # cli/provenance.py: the packaged servers' versions
