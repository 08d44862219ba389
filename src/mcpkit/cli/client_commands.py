"""The commands that talk to one server: `discover`, `list`, `call`, `read`, `prompt`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from .errors import CLIError, describe, did_you_mean

if TYPE_CHECKING:
    from ..client import Client

T = TypeVar("T")

#: -32601: the server has no such method (e.g. `prompts/list` on a server without prompts).
_METHOD_NOT_FOUND = -32601


class ListKind(StrEnum):
    tools = "tools"
    resources = "resources"
    prompts = "prompts"
    templates = "templates"


class LogLevel(StrEnum):
    debug = "debug"
    info = "info"
    notice = "notice"
    warning = "warning"
    error = "error"
    critical = "critical"
    alert = "alert"
    emergency = "emergency"


TargetArg = Annotated[
    str | None,
    typer.Argument(
        metavar="TARGET",
        help="Server URL, server.py[:OBJ] file, or command (one quoted string, or after --).",
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
LogLevelOpt = Annotated[
    LogLevel | None,
    typer.Option(
        "--log-level",
        "-l",
        help="Show the server's log messages at this level and above on stderr (default: "
        "none, whichever protocol version the server speaks).",
        show_default=False,
    ),
]


def _words(metavar: str, help: str) -> Any:
    """The `[TARGET] NAME ...` words of a command that names one thing on a server."""
    return typer.Argument(metavar=metavar, help=help, show_default=False)


@contextmanager
def _usage() -> Iterator[None]:
    """What the user typed did not parse (a `ValueError`): one line, no traceback."""
    try:
        yield
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def _run(work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the client coroutine (errors become one line in `main`)."""
    return asyncio.run(work())


def option_pairs(values: list[str] | None, sep: str, what: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for item in values or []:
        key, found, value = item.partition(sep)
        if not found or not key.strip():
            raise CLIError(f"expected {what}, got {item!r}")
        result[key.strip()] = value.strip() if sep == ":" else value
    return result


def _session(
    ctx: typer.Context,
    target: str | None,
    timeout: float,
    header: list[str] | None,
    env: list[str] | None,
    log_level: LogLevel | None = None,
) -> Client:
    from ..client import Client
    from .arguments import resolve_target
    from .output import logs_at, show_notification

    with _usage():
        resolved = resolve_target(target, ctx.obj)
        headers = option_pairs(header, ":", "'Name: value'")
        client = Client(
            resolved,
            timeout=timeout if timeout > 0 else None,
            headers=headers,
            env=option_pairs(env, "=", "KEY=VALUE") or None,
            on_notification=show_notification,
            on_log=logs_at(log_level.value if log_level is not None else None),
            log_level=log_level.value if log_level is not None else None,
            auth=_oauth(resolved, headers),
        )
    return client


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
    from ..client.auth import (
        AuthorizationCode,
        ClientMetadata,
        FileTokenStore,
        LoopbackAuthorizer,
        OAuth,
    )

    path = os.environ.get("MCPKIT_TOKEN_FILE") or "~/.config/mcpkit/tokens.json"
    grant = AuthorizationCode(
        LoopbackAuthorizer(), metadata=ClientMetadata(client_name="mcpkit CLI")
    )
    return OAuth(grant, store=FileTokenStore(path))


def _split_target(
    ctx: typer.Context, args: list[str] | None, what: str
) -> tuple[str | None, str, list[str]]:
    """`[TARGET] NAME [KEY=VALUE]...` (TARGET absent when the server comes after `--`)."""
    rest = list(args or [])
    target = rest.pop(0) if ctx.obj is None and rest else None
    if not rest:
        raise CLIError(f"missing {what}: mcpkit {ctx.info_name} TARGET {what} [KEY=VALUE]...")
    return target, rest[0], rest[1:]


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


def list_(
    ctx: typer.Context,
    target: TargetArg = None,
    kind: Annotated[ListKind, typer.Option("--kind", "-k", help="What to list.")] = ListKind.tools,
    json_output: JsonOpt = False,
    timeout: TimeoutOpt = 30.0,
    header: HeaderOpt = None,
    env: EnvOpt = None,
) -> None:
    """List a server's tools (or resources, prompts, resource templates); none is an empty list."""
    from ..protocol.errors import MCPError

    session = _session(ctx, target, timeout, header, env)

    async def work() -> list[dict[str, Any]]:
        async with session as client:
            try:
                if kind is ListKind.resources:
                    return [r.raw for r in await client.list_resources()]
                if kind is ListKind.prompts:
                    return [p.raw for p in await client.list_prompts()]
                if kind is ListKind.templates:
                    return [t.raw for t in await client.list_resource_templates()]
                return [t.raw for t in await client.list_tools()]
            except MCPError as exc:
                if exc.code == _METHOD_NOT_FOUND:  # the server has none of this kind
                    return []
                raise

    items = _run(work)
    from .output import print_json, print_list

    print_json(items) if json_output else print_list(kind.value, items)


def call(
    ctx: typer.Context,
    args: Annotated[
        list[str] | None,
        _words(
            "[TARGET] TOOL [KEY=VALUE]...",
            "Values take the type the tool's schema gives them (else JSON if they parse).",
        ),
    ] = None,
    args_json: Annotated[
        str | None,
        typer.Option("--args", help="All arguments as one JSON object (KEY=VALUE pairs win)."),
    ] = None,
    json_output: JsonOpt = False,
    timeout: TimeoutOpt = 60.0,
    header: HeaderOpt = None,
    env: EnvOpt = None,
    log_level: LogLevelOpt = None,
) -> None:
    """Call a tool and print its text output (exit code 1 if the tool failed)."""
    from .arguments import coerce_arguments, parse_json_object, split_pairs

    target, tool, pairs = _split_target(ctx, args, "TOOL")
    with _usage():
        base = parse_json_object(args_json) if args_json is not None else {}
        raw = split_pairs(pairs)
    session = _session(ctx, target, timeout, header, env, log_level)

    async def work() -> dict[str, Any]:
        from ..protocol.errors import MCPError
        from .output import show_progress
        from .spinner import waiting

        async with session as client:
            tools = {t.name: t for t in await _listed(client.list_tools)}
            schema = tools[tool].input_schema if tool in tools else None
            arguments = {**base, **coerce_arguments(raw, schema)}
            try:
                with waiting(f"calling {tool}"):
                    result = await client.call_tool(tool, arguments, progress=show_progress)
            except MCPError as exc:
                raise _suggest(exc, tool, list(tools)) from None
            return result.raw

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


def read(
    ctx: typer.Context,
    args: Annotated[list[str] | None, _words("[TARGET] URI", "The resource to read.")] = None,
    json_output: JsonOpt = False,
    timeout: TimeoutOpt = 60.0,
    header: HeaderOpt = None,
    env: EnvOpt = None,
) -> None:
    """Read a resource and print its text (blobs are summarised; --json prints them)."""
    target, uri, extra = _split_target(ctx, args, "URI")
    if extra:
        raise CLIError(f"unexpected {' '.join(extra)!r} after the URI: give one URI")
    session = _session(ctx, target, timeout, header, env)

    async def work() -> dict[str, Any]:
        from .spinner import waiting

        async with session as client:
            with waiting(f"reading {uri}"):
                return (await client.read_resource(uri)).raw

    result = _run(work)
    from .output import contents_text, print_json

    if json_output:
        print_json(result)
        return
    contents = [c for c in result.get("contents") or [] if isinstance(c, dict)]
    text = contents_text(contents)
    if text:
        typer.echo(text)


def prompt(
    ctx: typer.Context,
    args: Annotated[
        list[str] | None,
        _words("[TARGET] NAME [KEY=VALUE]...", "The prompt and its arguments (strings)."),
    ] = None,
    json_output: JsonOpt = False,
    timeout: TimeoutOpt = 60.0,
    header: HeaderOpt = None,
    env: EnvOpt = None,
) -> None:
    """Get a prompt and print its messages."""
    from .arguments import split_pairs

    target, name, pairs = _split_target(ctx, args, "NAME")
    with _usage():
        arguments = split_pairs(pairs)
    session = _session(ctx, target, timeout, header, env)

    async def work() -> dict[str, Any]:
        from ..protocol.errors import MCPError

        async with session as client:
            names = [p.name for p in await _listed(client.list_prompts)]
            try:
                return (await client.get_prompt(name, arguments)).raw
            except MCPError as exc:
                raise _suggest(exc, name, names) from None

    result = _run(work)
    from .output import print_json, prompt_text

    if json_output:
        print_json(result)
        return
    typer.echo(prompt_text(result))


def _suggest(exc: Exception, name: str, known: list[str]) -> Exception:
    """The server's error, with "did you mean" when `name` is not listed but close to one."""
    hint = "" if name in known else did_you_mean(name, known)
    return CLIError(describe(exc) + hint) if hint else exc


async def _listed(lister: Callable[[], Coroutine[Any, Any, list[T]]]) -> list[T]:
    """All tools (or prompts) for suggestions and schemas; none when the server cannot list."""
    from ..protocol.errors import MCPError

    try:
        return await lister()
    except MCPError:
        return []
