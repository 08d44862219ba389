"""`mcpkit record` and `mcpkit replay`: a server's answers kept in a cassette and served again,
offline (docs/record-replay.md). The work is in `mcpkit.cassette`."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Annotated

import typer

from .errors import CLIError
from .runtime import HostOpt, PortOpt, QuietOpt

__all__ = ["record", "replay"]

EXAMPLE = "mcpkit record --out server.jsonl -- npx -y @modelcontextprotocol/server-everything"


def record(
    ctx: typer.Context,
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="The cassette to write (JSON lines; replaced)."),
    ],
    redact: Annotated[
        list[str] | None,
        typer.Option(
            "--redact",
            metavar="PATTERN",
            help="Also redact values whose names match PATTERN (shell-style, any case; "
            "repeatable) [MCPKIT_REDACT: patterns, comma-separated].",
        ),
    ] = None,
    quiet: QuietOpt = False,
) -> None:
    """Stand in for a stdio server (started from the command after --) and record every
    message both ways to a cassette, secrets redacted: point the client at this command."""
    import asyncio

    from ..cassette.format import CassetteError, CassetteWriter, new_header
    from ..cassette.recorder import RecordError, record_stdio
    from ..cassette.redact import Redactor, rules_from_env

    command = _command(ctx.obj)
    redactor = Redactor([*(redact or ()), *rules_from_env(os.environ)], os.environ)
    server = {"command": [redactor.value(word) for word in command]}
    header = new_header(server, redactor.environment(os.environ), redactor.rules)
    try:
        writer = CassetteWriter(out, header)
    except CassetteError as exc:
        raise CLIError(str(exc)) from None
    try:
        code = asyncio.run(record_stdio(command, writer, redactor))
    except RecordError as exc:
        writer.close()
        if writer.count == 0:
            out.unlink(missing_ok=True)  # nothing was recorded: no empty cassette left behind
        raise CLIError(str(exc)) from None
    if not quiet:
        typer.echo(f"mcpkit record: {writer.count} messages written to {out}", err=True)
    raise typer.Exit(max(code, 0))  # a server this process stopped is not a failure


def _command(tail: list[str] | None) -> list[str]:
    from .arguments import resolve_target

    if not tail:
        raise CLIError(f"no server to record: give its command after --, e.g. {EXAMPLE}")
    try:
        target = resolve_target(None, tail)
    except ValueError as exc:
        raise CLIError(f"{exc}; e.g. {EXAMPLE}") from None
    if isinstance(target, list):
        return target
    if target.lower().startswith(("http://", "https://")):
        raise CLIError("cannot record an HTTP server yet: record a server's stdio command after --")
    return shlex.split(target)


def replay(
    cassette: Annotated[
        Path, typer.Argument(metavar="FILE", help="A cassette written by mcpkit record.")
    ],
    http: Annotated[
        bool, typer.Option("--http", help="Serve Streamable HTTP at /mcp instead of stdio.")
    ] = False,
    host: HostOpt = None,
    port: PortOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Serve a cassette as an MCP server, offline (stdio; HTTP with --http): each request is
    answered as recorded, with this run's ids, progress tokens and idempotency keys; a request
    the cassette lacks gets an error naming the closest recorded one."""
    from ..cassette.format import CassetteError, read_cassette
    from ..cassette.redact import Redactor, rules_from_env
    from ..cassette.replayer import Replayer
    from ..cassette.stdio import serve_stdio

    try:
        tape = read_cassette(cassette)
    except CassetteError as exc:
        raise CLIError(str(exc)) from None
    rules = [*(tape.header.get("redact") or ()), *rules_from_env(os.environ)]
    replayer = Replayer(tape, Redactor(rules, os.environ))
    if not http:
        serve_stdio(replayer)
        return
    from ..cassette.http import serve_http

    bind = host or os.environ.get("MCPKIT_HOST") or "127.0.0.1"
    try:
        number = port if port is not None else int(os.environ.get("MCPKIT_PORT") or 8000)
    except ValueError:
        raise CLIError("MCPKIT_PORT is not a port number: set it to 1-65535") from None
    if not quiet:
        typer.echo(f"mcpkit replay: {cassette} at http://{bind}:{number}/mcp", err=True)
    serve_http(replayer, bind, number)
