"""`mcpkit pins list|diff|approve`: the tool definitions the host pinned, and the changed and
new ones it withholds from the model until you approve them (a server never seen yet is
approved whole: its catalogue is listed and pinned)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .provenance import provenance
from .runtime import ConfigOpt, PinsOpt, fail, host_settings

if TYPE_CHECKING:
    from ..host.config import ServerConfig
    from ..host.pins import ToolPins

app = typer.Typer(
    name="pins",
    help="Review tool definitions that are new or changed since they were pinned, and approve them.",
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
    """Every pinned tool, whether its server now sends a changed definition, and new tools."""
    from rich.table import Table

    from .output import stdout_console

    entries = _pins(config, pins).entries()
    if not entries:
        typer.echo("no pinned tools yet (the host pins each tool the first time it sees it)")
        return
    table = Table("Server", "Tool", "Pinned", "Status")
    for e in entries:
        status = f"[yellow]changed ({e.pending}): awaiting approval[/]" if e.pending else "pinned"
        if e.digest is None:
            status = f"[yellow]new ({e.pending}): awaiting approval[/]"
        table.add_row(e.server, e.tool, e.digest or "-", status)
    stdout_console().print(table)


@app.command()
def diff(
    server: ServerArg = None, tool: ToolArg = None, config: ConfigOpt = None, pins: PinsOpt = None
) -> None:
    """Show what changed (description and schemas), pinned → now, and new tools whole."""
    changes = _pins(config, pins).pending(server, tool)
    if not changes:
        typer.echo("no new or changed tools await approval")
        return
    for change in changes:
        if change.reason:
            typer.echo(f"# {change.server}/{change.tool}: held for review: {change.reason}")
        typer.echo(change.diff())


@app.command()
def approve(
    server: Annotated[str, typer.Argument(help="The server whose changes you reviewed.")],
    tool: ToolArg = None,
    config: ConfigOpt = None,
    pins: PinsOpt = None,
) -> None:
    """Pin the new and changed definitions of a server (or one tool): the host offers them.
    A configured server never seen yet is started and its whole catalogue pinned; changes no
    host has recorded yet (`mcpkit tools` records none) are recorded for review first."""
    store = _pins(config, pins)
    approved = store.approve(server, tool)
    if not approved and tool is None and not store.approved(server):
        count = approve_catalogue(store, config, server)
        typer.echo(f"approved the {count} tool(s) of {server} (its catalogue as listed now)")
        return
    if not approved:
        what = f"{server}/{tool}" if tool else server
        if not record_changes(store, config, server, tool):
            fail(f"nothing to approve for {what} (see: mcpkit pins list)")
        fail(
            f"nothing approved: {what} has changes no host had recorded yet, recorded now; "
            f"review them (mcpkit pins diff {server}), then run this again"
        )
    for change in approved:
        typer.echo(f"approved {change.server}/{change.tool} ({change.digest})")


app.command("provenance")(provenance)  # cli/provenance.py: the packaged servers' versions


def approve_configured(config: Path, server: str) -> int:
    """`mcpkit install --approve`: pin the catalogue of the server just configured."""
    count = approve_catalogue(_pins(config, None), config, server)
    typer.echo(f"approved the {count} tool(s) of {server!r} for mcpkit hosts", err=True)
    return count


def approve_catalogue(store: ToolPins, config: Path | None, server: str) -> int:
    """Start the configured `server`, list its tools and pin them all (bulk approval when a
    server is configured, before any host sees it). Returns how many were pinned."""
    import asyncio

    entry = _entry(config, server)
    if entry is None:
        fail(f"no server {server!r} in the configuration, and nothing of it to approve")
    tools = asyncio.run(_catalogue(entry))
    store.pin(server, tools)
    return len(tools)


def record_changes(store: ToolPins, config: Path | None, server: str, tool: str | None) -> int:
    """Start the configured `server` and record what differs from its pins as awaiting
    approval, as a host meeting it would. Returns how many of those (of `tool`) wait now."""
    import asyncio

    entry = _entry(config, server)
    if entry is None:
        return 0
    tools = asyncio.run(_catalogue(entry))
    review = store.review(server, tools, trust_new=entry.trust_new_tools)
    return sum(tool is None or c.tool == tool for c in review.withheld)


def _entry(config: Path | None, server: str) -> ServerConfig | None:
    from ..host import ConfigError, load_config

    try:
        return load_config(config).servers.get(server)
    except ConfigError as exc:
        fail(str(exc))


async def _catalogue(entry: ServerConfig) -> list[dict[str, Any]]:
    from ..client import Client
    from ..host.auth_config import oauth_for
    from ..host.supervision import describe
    from .errors import CLIError

    try:
        async with Client(
            entry.client_target(),
            timeout=entry.timeout,
            connect_timeout=entry.start_deadline,
            auth=oauth_for(entry),
        ) as client:
            return [t.raw for t in await client.list_tools()]
    except Exception as exc:
        raise CLIError(
            f"cannot list the tools of {entry.name!r} to approve them ({describe(exc)}); "
            "check the server starts (mcpkit tools -s NAME), then try again"
        ) from None
