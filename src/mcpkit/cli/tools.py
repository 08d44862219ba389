"""`mcpkit tools`: the namespaced tool catalogue the model would see, started as the host starts
it, pins included. The pin file (`host.pins`, else the state directory's) is read, never
written: tools the host would hold for approval (`host/pins.py`, `host/quarantine.py`: a new
server's catalogue, a tool added or renamed on a pinned server, a definition changed since it
was pinned, one the content checks flag) are not in the catalogue but listed after it, each
with why it waits, and how to approve them."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .host import ConfigOpt, NoCacheOpt, ServersOpt, _check_servers, _load

if TYPE_CHECKING:
    from rich.console import Console

    from ..host.pins import PinChange

HeldOpt = Annotated[
    bool,
    typer.Option(
        "--held",
        help='With --json: print {"tools": [...], "awaitingApproval": [...]}, the tools held '
        "for approval too, instead of the list of visible tools.",
    ),
]


def tools(
    config: ConfigOpt = None,
    servers: ServersOpt = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    held_json: HeldOpt = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """Print the namespaced tool catalogue the model would see.

    The servers start in parallel, each with a line on stderr, for `host.startupTimeout`
    seconds at most; then each server's outcome (its tool count, or why it is not listed)
    and the catalogue on stdout (a table, or JSON with --json). Tools the host holds for
    approval (a new server's, a tool added, renamed or changed since it was pinned, or flagged
    by the content checks) are not in it: they are listed after it with why, and how to
    approve them (mcpkit pins approve SERVER). The pin file is read, never written. Exit code 1
    when a server is not listed (it failed, or was still starting); held tools are not an
    error. A lazy server is listed from its record (not started) unless it has none, or with
    --no-cache."""
    import asyncio

    from .output import stderr_console, stdout_console

    cfg = _load(config)
    _check_servers(cfg, servers)
    notes = stderr_console()
    rows, held, outcomes = asyncio.run(_catalogue(cfg, config, servers, no_cache, notes))
    ready = sum(o.ending == "ready" for o in outcomes)
    notes.print(
        f"{len(rows)} tool{'' if len(rows) == 1 else 's'} from {ready} of {len(outcomes)} "
        f"server{'' if len(outcomes) == 1 else 's'}"
        + (f"; {len(held)} awaiting approval" if held else ""),
        markup=False,
    )
    visible = [_tool_json(a, t) for a, t in rows]
    if json_output and held_json:
        waiting = [_held_json(c, why, config) for c, why in held]
        typer.echo(json.dumps({"tools": visible, "awaitingApproval": waiting}, indent=2))
    elif json_output:
        typer.echo(json.dumps(visible, indent=2))
        _print_held(notes, held, config)  # for the reader; a script asks with --held
    else:
        _tool_table(stdout_console(), rows)
        _print_held(stdout_console(), held, config)
    if ready < sum(o.ending != "disabled" for o in outcomes):
        raise typer.Exit(1)  # a server is missing from the catalogue (failed, or still starting)


async def _catalogue(
    cfg: Any, config: Path | None, servers: list[str] | None, no_cache: bool, notes: Console
) -> tuple[list[Any], list[tuple[PinChange, str]], list[Any]]:
    """Start the fleet as the host would (its pins read-only): the visible tools (alias and
    target), the held ones with why, and each server's outcome."""
    from ..host import ConsentPolicy, Fleet
    from ..host.paths import state_path
    from ..host.pins import ToolPins
    from ..host.records import RecordStore
    from ..host.terminal import TerminalUI
    from .runtime import host_settings
    from .startup import start_in_view

    settings = host_settings(config, cfg)
    records = None
    if settings.cache and not no_cache:
        records = RecordStore(settings.records or state_path("servers"))
    pins = ToolPins(settings.pins, read_only=True)
    fleet = Fleet(
        cfg, TerminalUI(notes), ConsentPolicy(), pins=pins, servers=servers, records=records
    )
    first_sight = {name for name in fleet.links if not pins.approved(name)}
    try:
        outcomes = await start_in_view(fleet, settings.startup_timeout, notes)
        names = sorted(t.name for t in fleet.catalog())
        held = [(c, _why(c, c.server in first_sight)) for c in fleet.pending_changes()]
        return [(alias, fleet.lookup(alias)) for alias in names], held, outcomes
    finally:
        await fleet.close()


def _why(change: PinChange, first_sight: bool) -> str:
    """`new-server`, `new-tool` (added, or renamed) or `changed` (since it was pinned)."""
    if change.new:
        return "new-server" if first_sight else "new-tool"
    return "changed"


_WHY = {
    "new-server": "new server: its catalogue awaits approval",
    "new-tool": "new on its server (added, or renamed)",
    "changed": "changed since it was pinned",
}


def _approve(server: str, config: Path | None) -> str:
    return f"mcpkit pins approve {shlex.quote(server)}{_given(config)}"


def _given(config: Path | None) -> str:
    return f" --config {shlex.quote(str(config))}" if config is not None else ""


def _held_json(change: PinChange, why: str, config: Path | None) -> dict[str, Any]:
    return {
        "server": change.server,
        "tool": change.tool,
        "why": why,
        "flagged": change.reason,
        "digest": change.digest,
        "approve": _approve(change.server, config),
    }


def _print_held(console: Console, held: list[tuple[PinChange, str]], config: Path | None) -> None:
    """After the catalogue: each held tool and why, then one line saying how to approve."""
    if not held:
        return
    count = f"{len(held)} tool{'' if len(held) == 1 else 's'}"
    lines = [f"awaiting approval ({count} the model does not see until you approve them):"]
    for change, why in held:
        flagged = f"; flagged by the content checks: {change.reason}" if change.reason else ""
        lines.append(f"  {change.server}/{change.tool}: {_WHY[why]}{flagged}")
    servers = list(dict.fromkeys(change.server for change, _ in held))
    commands = "; ".join(_approve(s, config) for s in servers)
    lines.append(
        f"to offer them, review (mcpkit pins diff SERVER) and approve: {commands} "
        f"(or in the web UI's side panel: mcpkit ui{_given(config)})"
    )
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def _tool_json(alias: str, target: Any) -> dict[str, Any]:
    return {
        "name": alias,
        "server": target.link.name,
        "tool": target.tool.name,
        "inputSchema": target.schema.schema,
    }


def _tool_table(console: Any, rows: list[Any]) -> None:
    from rich.table import Table

    table = Table("Name for the model", "Server", "Description")
    for alias, target in rows:
        table.add_row(
            alias,
            target.link.name + (" (trusted)" if target.link.config.trusted else ""),
            (target.tool.description or "").splitlines()[0] if target.tool.description else "",
        )
    console.print(table)
