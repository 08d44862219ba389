"""The `mcpkit` command: `run` a server; `discover`, `list`, `call`, `read` and `prompt` a running
one; `dev` it in the browser's inspector; `install` it into an MCP client; `host` an agent over
several (`tools` shows its catalogue).

TARGET is an http(s) URL, a server file (`server.py[:OBJ]`, served with this interpreter), a
command in one string (`"python server.py"`), or a command given after `--` (`mcpkit call add
a=1 -- python server.py`). Heavy imports (rich, aiohttp, the client) happen inside the commands
so that startup stays cheap.

Every failure ends the same way: one line on stderr (what failed, why, what to do) and exit
status 1 — usage errors included; Ctrl-C exits with 130 and no traceback (`MCPKIT_DEBUG=1`
shows the traceback of an unexpected error).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from .._version import __version__
from .arguments import split_command_tail
from .errors import CLIError, describe, did_you_mean, one_line, show_tracebacks
from .runtime import HostOpt, PortOpt, QuietOpt

__all__ = ["app", "main"]

#: click's exceptions, wherever this typer takes click from (recent releases vendor it).
_clicks: Any = importlib.import_module(typer.BadParameter.__module__)


class _Group(TyperGroup):
    """The root command: turns every way a command can fail into one line on stderr."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            known = self.list_commands(ctx)
            hint = did_you_mean(name, known) or f" (commands: {', '.join(known)})"
            raise _clicks.UsageError(f"no command {name!r}{hint}", ctx)
        return super().resolve_command(ctx, args)

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        code = _guarded(
            lambda: super(_Group, self).main(
                args, prog_name, complete_var, standalone_mode=False, **extra
            )
        )
        if standalone_mode:
            sys.exit(code)
        return code


def _guarded(call: Any) -> int:
    """Run the command; return its exit status, having printed any failure as one line."""
    from .output import print_error

    no_args = getattr(_clicks, "NoArgsIsHelpError", ())
    try:
        result = call()
    except no_args as exc:
        typer.echo(exc.format_message())
        return 0
    except _clicks.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "mcpkit"
        print_error(f"{one_line(exc.format_message()).rstrip('.')} (see '{where} --help')")
        return 1
    except _clicks.ClickException as exc:
        print_error(one_line(exc.format_message()))
        return 1
    except typer.Abort:
        return 130
    except KeyboardInterrupt:
        return 130
    except CLIError as exc:
        print_error(describe(exc))
        return exc.exit_code
    except Exception as exc:
        if show_tracebacks():
            raise
        print_error(describe(exc))
        return 1
    return result if isinstance(result, int) else 0


app = typer.Typer(
    name="mcpkit",
    cls=_Group,
    help="Run Model Context Protocol servers and talk to them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point (`mcpkit = "mcpkit.cli.main:main"`)."""
    head, tail = split_command_tail(sys.argv[1:] if argv is None else argv)
    app(args=head, obj=tail, prog_name="mcpkit")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mcpkit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Run Model Context Protocol servers and talk to them."""


class TransportName(StrEnum):
    stdio = "stdio"
    http = "http"


class LogLevel(StrEnum):
    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"


LogLevelOpt = Annotated[
    LogLevel | None,
    typer.Option(
        "--log-level", "-l", help="Server log level, on stderr [MCPKIT_LOG_LEVEL, else warning]."
    ),
]


def _http_limit(help: str) -> Any:
    """An HTTP limit's option (README "Limits (HTTP)"); unset, the limit keeps its default."""
    return typer.Option(help=f"HTTP: {help}")


HeaderTimeoutOpt = Annotated[
    float | None, _http_limit("seconds for a request head [60] (408 after).")
]
BodyTimeoutOpt = Annotated[
    float | None, _http_limit("seconds between body reads [60] (408 after).")
]
MaxConnectionsOpt = Annotated[
    int | None, _http_limit("open connections [from ulimit -n] (503 past it).")
]
MaxListenStreamsOpt = Annotated[
    int | None, _http_limit("listen streams [a tenth under --max-connections] (503 past it).")
]
MaxBodySizeOpt = Annotated[int | None, _http_limit("request body bytes [4 MiB] (413 past it).")]


@app.command()
def run(
    spec: Annotated[
        str,
        typer.Argument(metavar="FILE[:OBJ]", help="Python file or module, and the server's name."),
    ],
    transport: Annotated[
        TransportName, typer.Option("--transport", "-T", help="How to serve.")
    ] = TransportName.stdio,
    host: HostOpt = None,
    port: PortOpt = None,
    log_level: LogLevelOpt = None,
    header_timeout: HeaderTimeoutOpt = None,
    body_timeout: BodyTimeoutOpt = None,
    max_connections: MaxConnectionsOpt = None,
    max_listen_streams: MaxListenStreamsOpt = None,
    max_body_size: MaxBodySizeOpt = None,
    reload: Annotated[
        bool,
        typer.Option("--reload", help="Restart when a file under the server's folder changes."),
    ] = False,
    workers: Annotated[
        int,
        typer.Option(
            help="HTTP: processes serving the port (Linux SO_REUSEPORT) [1]; more than one "
            "serves the 2026-07-28 wire only.",
            min=1,
        ),
    ] = 1,
    redis: Annotated[
        str | None,
        typer.Option(
            help="Share tasks, handles, change events and single-use state through this "
            "Redis URL [MCPKIT_REDIS_URL].",
        ),
    ] = None,
    quiet: QuietOpt = False,
) -> None:
    """Run the mcpkit server defined in a Python file or module (says what it serves on stderr)."""
    from .serve import serve

    serve(
        spec,
        transport=transport.value,
        host=host,
        port=port,
        log_level=log_level.value if log_level is not None else None,
        reload=reload,
        quiet=quiet,
        workers=workers,
        redis=redis,
        limits={  # the HTTP limits (README "Limits (HTTP)"); unset ones keep their defaults
            "header_timeout": header_timeout,
            "body_timeout": body_timeout,
            "max_connections": max_connections,
            "max_listen_streams": max_listen_streams,
            "max_body_size": max_body_size,
        },
    )


def _register_commands() -> None:
    from .audit import audit
    from .cassette import record, replay
    from .client_commands import call, discover, list_, prompt, read
    from .dev import dev
    from .gateway import gateway
    from .host import host
    from .install import install
    from .lint import lint
    from .pins import app as pins_app
    from .tools import tools
    from .ui import ui

    # In the order `mcpkit --help` lists them (the `pins` group between the two).
    before: list[tuple[str, Callable[..., None]]] = [
        ("discover", discover),
        ("list", list_),
        ("call", call),
        ("read", read),
        ("prompt", prompt),
        ("install", install),
        ("host", host),
        ("tools", tools),
    ]
    after: list[tuple[str, Callable[..., None]]] = [
        ("audit", audit),
        ("lint", lint),
        ("ui", ui),
        ("dev", dev),
        ("gateway", gateway),
        ("record", record),
        ("replay", replay),
    ]
    for name, command in before:
        app.command(name)(command)
    app.add_typer(pins_app, name="pins")
    for name, command in after:
        app.command(name)(command)


_register_commands()
