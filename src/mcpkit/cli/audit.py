"""`mcpkit audit`: the host's audit trail (one JSON line per tool call) as a table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .runtime import ConfigOpt, fail, host_settings


def audit(
    file: Annotated[
        Path | None,
        typer.Option(
            "--file", "-f", help="The audit log (default: the config's, else the state dir)."
        ),
    ] = None,
    config: ConfigOpt = None,
    last: Annotated[int, typer.Option("--last", "-n", help="Show the last N calls (0: all).")] = 50,
    json_output: Annotated[bool, typer.Option("--json", help="Print the records as JSON.")] = False,
) -> None:
    """Show which tools were called, with what (a digest), who allowed it and how it ended."""
    from ..host.audit import default_audit_path, read_audit

    path = file or host_settings(config).audit or default_audit_path()
    try:
        records = list(read_audit(path))
    except FileNotFoundError:
        fail(
            f'no audit log at {path} (turn it on with "host": {{"audit": PATH}} or mcpkit host --audit PATH)'
        )
    except OSError as exc:
        fail(f"cannot read the audit log {path}: {exc.strerror}")
    if last > 0:
        records = records[-last:]
    if json_output:
        from .output import print_json

        print_json(records)
        return
    from rich.markup import escape
    from rich.table import Table

    from .output import stdout_console

    table = Table("Time", "Agent", "Call", "Decision", "Outcome", "ms", "Error")
    for r in records:
        outcome = str(r.get("outcome", ""))
        style = "green" if outcome == "ok" else "yellow" if outcome == "denied" else "red"
        if isinstance(r.get("attempts"), int) and r["attempts"] > 1:
            outcome += f" ({r['attempts']} attempts)"
        table.add_row(
            escape(str(r.get("time", "")).replace("T", " ").rstrip("Z")),
            escape(" ".join(str(r[k]) for k in ("agent", "principal") if r.get(k)) or "-"),
            escape(f"{r.get('server')} > {r.get('tool')}"),
            escape(f"{r.get('decision')} ({r.get('by')})"),
            f"[{style}]{escape(outcome)}[/]",
            escape(str(r.get("duration_ms", ""))),
            escape(str(r.get("error") or "")),
        )
    stdout_console().print(table)
