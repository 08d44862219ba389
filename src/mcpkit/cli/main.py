"""The `mcpkit` command: `run` a server; `discover`, `list` and `call` a running one.

TARGET is an http(s) URL, a command in one string (`"python server.py"`), or a command
given after `--` (`mcpkit call add a=1 -- python server.py`). Heavy imports (rich,
aiohttp, the client) happen inside the commands so that startup stays cheap.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer

from .._version import __version__
from .arguments import parse_key_values, split_command_tail
from .lint import lint

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["app", "main"]

T = TypeVar("T")

app = typer.Typer(
    name="mcpkit",
    help="Run Model Context Protocol servers and talk to them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class TransportName(StrEnum):
    stdio = "stdio"
    http = "http"


class ListKind(StrEnum):
    tools = "tools"
    resources = "resources"
    prompts = "prompts"
    templates = "templates"


TargetArg = Annotated[
    str | None,
    typer.Argument(
        metavar="TARGET",
        help="Server URL, or command to run (one quoted string, or after --).",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the raw JSON result.")]
TimeoutOpt = Annotated[
    float, typer.Option("--timeout", "-t", help="Seconds to wait for each response.")
]
HeaderOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--header", "-H", help="HTTP header 'Name: value' (repeatable).", show_default=False
    ),
]
EnvOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--env", "-e", help="KEY=VALUE for a stdio server (repeatable).", show_default=False
    ),
]


def _register_host_commands() -> None:
    from .audit import audit
    from .host import host, tools
    from .pins import app as pins_app
    from .ui import ui

    app.command("host")(host)
    app.command("tools")(tools)
    app.add_typer(pins_app, name="pins")
    app.command("audit")(audit)
    app.command("ui")(ui)


_register_host_commands()
app.command()(lint)  # mcpkit lint (cli/lint.py)


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


def _fail(message: str) -> NoReturn:
    from .output import print_error

    print_error(message)
    raise typer.Exit(1)


def _run(work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the client coroutine; MCP and transport errors become one red line, exit 1."""
    from ..client.errors import ClientError
    from ..protocol.errors import MCPError

    try:
        return asyncio.run(work())
    except MCPError as exc:
        _fail(f"{exc.message} (error {exc.code})")
    except ClientError as exc:
        _fail(str(exc) or type(exc).__name__)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


def _resolve_target(ctx: typer.Context, target: str | None) -> str | list[str]:
    tail: list[str] | None = ctx.obj
    if tail is not None and target is not None:
        raise typer.BadParameter("give the server either as TARGET or after --, not both")
    if tail is not None:
        if not tail:
            raise typer.BadParameter("no command after --")
        return tail
    if target is None or not target.strip():
        raise typer.BadParameter("missing TARGET (a server URL or a command)")
    return target


def _pairs(values: list[str] | None, sep: str, what: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for item in values or []:
        key, found, value = item.partition(sep)
        if not found or not key.strip():
            raise typer.BadParameter(f"expected {what}, got {item!r}")
        result[key.strip()] = value.strip() if sep == ":" else value
    return result


def _session(
    ctx: typer.Context,
    target: str | None,
    timeout: float,
    header: list[str] | None,
    env: list[str] | None,
) -> Client:
    from ..client import Client
    from .output import show_log, show_notification

    try:
        resolved = _resolve_target(ctx, target)
        headers = _pairs(header, ":", "'Name: value'")
        return Client(
            resolved,
            timeout=timeout if timeout > 0 else None,
            headers=headers,
            env=_pairs(env, "=", "KEY=VALUE") or None,
            on_notification=show_notification,
            on_log=show_log,
            auth=_oauth(resolved, headers),
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _oauth(target: str | list[str], headers: dict[str, str]) -> Any:
    """HTTP servers that answer 401 are authorized interactively: the URL is printed (and
    opened), the redirect comes back to a loopback listener, and tokens are kept per
    authorization server in MCPKIT_TOKEN_FILE (default ~/.config/mcpkit/tokens.json), so
    later runs refresh without asking. An explicit `-H Authorization: ...` turns this off."""
    import os

    from ..client.target import is_url

    if not isinstance(target, str) or not is_url(target):
        return None
    if any(name.lower() == "authorization" for name in headers):
        return None
    from ..auth import AuthorizationCode, ClientMetadata, FileTokenStore, LoopbackAuthorizer, OAuth

    path = os.environ.get("MCPKIT_TOKEN_FILE") or "~/.config/mcpkit/tokens.json"
    grant = AuthorizationCode(
        LoopbackAuthorizer(), metadata=ClientMetadata(client_name="mcpkit CLI")
    )
    return OAuth(grant, store=FileTokenStore(path))


@app.command()
def run(
    spec: Annotated[
        str,
        typer.Argument(metavar="FILE[:OBJ]", help="Python file or module, and the server's name."),
    ],
    transport: Annotated[
        TransportName, typer.Option("--transport", "-T", help="How to serve.")
    ] = TransportName.stdio,
    host: Annotated[
        str | None, typer.Option(help="HTTP bind address [MCPKIT_HOST, else 127.0.0.1].")
    ] = None,
    port: Annotated[int | None, typer.Option(help="HTTP port [MCPKIT_PORT, else 8000].")] = None,
) -> None:
    """Run the mcpkit server defined in a Python file or module."""
    from ..server.settings import SettingsError
    from .loader import find_server, load_module, split_spec

    path, name = split_spec(spec)
    try:
        server = find_server(load_module(path), name)
        given = {k: v for k, v in (("host", host), ("port", port)) if v is not None}
        server.run(transport=transport.value, **given)  # the rest: MCPKIT_* settings
    except (ImportError, OSError, LookupError, SettingsError) as exc:
        _fail(str(exc))


@app.command()
def discover(
    ctx: typer.Context,
    target: TargetArg = None,
    json_output: JsonOpt = False,
    timeout: TimeoutOpt = 30.0,
    header: HeaderOpt = None,
    env: EnvOpt = None,
) -> None:
    """Show a server's identity, protocol versions and capabilities."""
    session = _session(ctx, target, timeout, header, env)

    async def work() -> dict[str, Any]:
        async with session as client:
            info = await client.discover()
            if info.era == "modern":
                return info.raw
            # A legacy server: its initialize result, in the shape of a discover result.
            server_info = {"name": info.name, "version": info.version}
            return {
                "era": "legacy",
                "supportedVersions": [info.protocol_version],
                "capabilities": info.capabilities,
                "instructions": info.instructions,
                "_meta": {"io.modelcontextprotocol/serverInfo": server_info},
            }

    result = _run(work)
    from .output import print_discover, print_json

    print_json(result) if json_output else print_discover(result)


@app.command("list")
def list_(
    ctx: typer.Context,
    target: TargetArg = None,
    kind: Annotated[ListKind, typer.Option("--kind", "-k", help="What to list.")] = ListKind.tools,
    json_output: JsonOpt = False,
    timeout: TimeoutOpt = 30.0,
    header: HeaderOpt = None,
    env: EnvOpt = None,
) -> None:
    """List a server's tools (or resources, prompts, resource templates)."""
    session = _session(ctx, target, timeout, header, env)

    async def work() -> list[dict[str, Any]]:
        async with session as client:
            if kind is ListKind.resources:
                return [r.raw for r in await client.list_resources()]
            if kind is ListKind.prompts:
                return [p.raw for p in await client.list_prompts()]
            if kind is ListKind.templates:
                return [t.raw for t in await client.list_resource_templates()]
            return [t.raw for t in await client.list_tools()]

    items = _run(work)
    from .output import print_json, print_list

    print_json(items) if json_output else print_list(kind.value, items)


@app.command()
def call(
    ctx: typer.Context,
    args: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[TARGET] TOOL [KEY=VALUE]...",
            help="Values are JSON when they parse as JSON, else strings.",
            show_default=False,
        ),
    ] = None,
    json_output: JsonOpt = False,
    timeout: TimeoutOpt = 60.0,
    header: HeaderOpt = None,
    env: EnvOpt = None,
) -> None:
    """Call a tool and print its text output (exit code 1 if the tool failed)."""
    rest = list(args or [])
    target = rest.pop(0) if ctx.obj is None and rest else None
    if not rest:
        raise typer.BadParameter("missing TOOL")
    tool, pairs = rest[0], rest[1:]
    try:
        arguments = parse_key_values(pairs)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    session = _session(ctx, target, timeout, header, env)

    async def work() -> dict[str, Any]:
        from .output import show_progress

        async with session as client:
            return (await client.call_tool(tool, arguments, progress=show_progress)).raw

    result = _run(work)
    from .output import content_text, print_error, print_json

    if json_output:
        print_json(result)
    elif result.get("isError") is True:
        print_error(content_text(result) or f"tool {tool!r} failed")
    else:
        text = content_text(result)
        if text:
            typer.echo(text)
    if result.get("isError") is True:
        raise typer.Exit(1)
