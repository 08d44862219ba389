"""`mcpkit record` and `mcpkit replay`: a server's answers kept in a cassette and served again,
offline (docs/record-replay.md). The work is in `mcpkit.cassette`."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .errors import CLIError
from .runtime import HostOpt, PortOpt, QuietOpt

if TYPE_CHECKING:
    from ..cassette.format import CassetteWriter
    from ..cassette.redact import Redactor

__all__ = ["record", "replay"]

EXAMPLE = "mcpkit record --out server.jsonl -- npx -y @modelcontextprotocol/server-everything"


#: `record` and `replay` alike; `record` also serves HTTP when given a URL (HTTP is recorded
#: over HTTP).
HttpOpt = Annotated[
    bool,
    typer.Option(
        "--http", help="Serve Streamable HTTP at /mcp instead of stdio (implied by a URL)."
    ),
]


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
    url: Annotated[
        str | None,
        typer.Argument(metavar="[URL]", help="An HTTP server to record (served at /mcp here)."),
    ] = None,
    http: HttpOpt = False,
    host: HostOpt = None,
    port: PortOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Stand in for a server and record every message both ways to a cassette, secrets
    redacted: a stdio server (its command after --) over this process's stdio, or an HTTP
    server (its URL) over HTTP at http://HOST:PORT/mcp. Point the client at the recorder."""
    target = _target(url, ctx.obj)
    if http and not isinstance(target, str):
        raise CLIError(
            "a stdio server is recorded over stdio: drop --http (mcpkit replay --http serves "
            "its cassette over HTTP)"
        )
    writer, redactor = _open(out, target, redact or [])
    if isinstance(target, str):
        _record_http(target, writer, redactor, host, port, quiet)
    else:
        raise typer.Exit(_record_stdio(target, writer, redactor, quiet))


def _open(out: Path, target: str | list[str], rules: list[str]) -> tuple[CassetteWriter, Redactor]:
    """The cassette's writer, its header written, and the redactor of its rules."""
    from ..cassette.format import CassetteError, CassetteWriter, new_header
    from ..cassette.redact import Redactor, rules_from_env

    redactor = Redactor([*rules, *rules_from_env(os.environ)], os.environ)
    server: dict[str, Any] = (
        {"url": redactor.value(target)}
        if isinstance(target, str)
        else {"command": [redactor.value(word) for word in target]}
    )
    header = new_header(server, redactor.environment(os.environ), redactor.rules)
    try:
        return CassetteWriter(out, header), redactor
    except CassetteError as exc:
        raise CLIError(str(exc)) from None


def _record_stdio(
    command: list[str], writer: CassetteWriter, redactor: Redactor, quiet: bool
) -> int:
    import asyncio

    from ..cassette.recorder import RecordError, record_stdio

    try:
        code = asyncio.run(record_stdio(command, writer, redactor))
    except RecordError as exc:
        writer.close()
        if writer.count == 0:
            writer.path.unlink(missing_ok=True)  # nothing recorded: no empty cassette left
        raise CLIError(str(exc)) from None
    if not quiet:
        typer.echo(f"mcpkit record: {writer.count} messages written to {writer.path}", err=True)
    return max(code, 0)  # a server this process stopped is not a failure


def _target(url: str | None, tail: list[str] | None) -> str | list[str]:
    """The URL to record over HTTP, or the command to record over stdio."""
    from .arguments import resolve_target

    if url is None and not tail:
        raise CLIError(f"no server to record: give its command after --, e.g. {EXAMPLE}")
    try:
        target = resolve_target(url, tail)
    except ValueError as exc:
        raise CLIError(f"{exc}; e.g. {EXAMPLE}") from None
    if isinstance(target, list):
        return target
    if target.lower().startswith(("http://", "https://")):
        return target
    if url is not None:
        raise CLIError(f"{url!r} is not an http(s) URL: give a stdio server's command after --")
    return shlex.split(target)


def _record_http(
    url: str,
    writer: CassetteWriter,
    redactor: Redactor,
    host: str | None,
    port: int | None,
    quiet: bool,
) -> None:
    from ..cassette.http_record import serve_recorder

    bind, number = _address(host, port)
    if not quiet:
        typer.echo(f"mcpkit record: {url} at http://{bind}:{number}/mcp", err=True)
    try:
        serve_recorder(url, writer, redactor, bind, number)
    finally:
        writer.close()
    if not quiet:
        typer.echo(f"mcpkit record: {writer.count} messages written to {writer.path}", err=True)


def _address(host: str | None, port: int | None) -> tuple[str, int]:
    bind = host or os.environ.get("MCPKIT_HOST") or "127.0.0.1"
    try:
        return bind, port if port is not None else int(os.environ.get("MCPKIT_PORT") or 8000)
    except ValueError:
        raise CLIError("MCPKIT_PORT is not a port number: set it to 1-65535") from None


def replay(
    cassette: Annotated[
        Path, typer.Argument(metavar="FILE", help="A cassette written by mcpkit record.")
    ],
    http: HttpOpt = False,
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

    bind, number = _address(host, port)
    if not quiet:
        typer.echo(f"mcpkit replay: {cassette} at http://{bind}:{number}/mcp", err=True)
    serve_http(replayer, bind, number)
