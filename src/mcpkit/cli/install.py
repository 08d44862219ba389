"""`mcpkit install CLIENT SERVER`: add a server to an MCP client's own configuration file.

Each client keeps servers in its own file and shape (documented by each client):

| client         | user file (default)                                   | `--scope project` | shape |
| -------------- | ----------------------------------------------------- | ----------------- | ----- |
| claude-desktop | macOS `~/Library/Application Support/Claude/claude_desktop_config.json`, Windows `%APPDATA%\\Claude\\...`, Linux `~/.config/Claude/...` | none | `mcpServers`, stdio only |
| claude-code    | `~/.claude.json` (user scope)                         | `.mcp.json`        | `mcpServers`, `type` stdio/http |
| cursor         | `~/.cursor/mcp.json`                                  | `.cursor/mcp.json` | `mcpServers`, `url` for HTTP |
| vscode         | the user profile's `mcp.json` (`Code/User/mcp.json`)  | `.vscode/mcp.json` | `servers`, `type` stdio/http |
| mcp-json       | `.mcp.json` here (what `mcpkit host` reads first)     | `.mcp.json`        | `mcpServers`, `type` http |

Other entries and keys in the file are kept; an entry of the same name is replaced. Files with
comments or trailing commas (JSONC, as VS Code writes them) are read; as the rewrite is plain
JSON, the original is kept beside it as `NAME.bak`. `mcpkit tools --config FILE` reads every
file written here. `--approve` starts the server once and pins its tools in mcpkit's pin file
(the written file's `host.pins`, else the state directory's), so that mcpkit's hosts offer
them from the first conversation instead of withholding a new server's catalogue.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from .errors import CLIError

__all__ = ["config_path", "entry_for", "install", "merge_entry"]


class ClientName(StrEnum):
    claude_desktop = "claude-desktop"
    claude_code = "claude-code"
    cursor = "cursor"
    vscode = "vscode"
    mcp_json = "mcp-json"


class Scope(StrEnum):
    user = "user"
    project = "project"


_TITLES = {
    "claude-desktop": "Claude Desktop",
    "claude-code": "Claude Code",
    "cursor": "Cursor",
    "vscode": "VS Code",
    "mcp-json": "mcpkit host and other mcpServers readers",
}


def _app_data(home: Path, platform: str, environ: dict[str, str]) -> Path:
    """The per-user application folder: macOS, Windows (%APPDATA%) or XDG on Linux."""
    if platform == "darwin":
        return home / "Library/Application Support"
    if platform.startswith("win"):
        return Path(environ.get("APPDATA") or home / "AppData/Roaming")
    return Path(environ.get("XDG_CONFIG_HOME") or home / ".config")


def config_path(
    client: str,
    scope: str = "user",
    *,
    home: Path | None = None,
    cwd: Path | None = None,
    platform: str = sys.platform,
    environ: dict[str, str] | None = None,
) -> Path:
    """Where `client` keeps its servers for `scope` on `platform`."""
    home = home or Path.home()
    cwd = cwd or Path.cwd()
    environ = dict(os.environ) if environ is None else environ
    if client == "claude-desktop":
        if scope == "project":
            raise CLIError("Claude Desktop has no project configuration: drop --scope project")
        return _app_data(home, platform, environ) / "Claude/claude_desktop_config.json"
    if client == "claude-code":
        return cwd / ".mcp.json" if scope == "project" else home / ".claude.json"
    if client == "cursor":
        return (cwd if scope == "project" else home) / ".cursor/mcp.json"
    if client == "vscode":
        if scope == "project":
            return cwd / ".vscode/mcp.json"
        return _app_data(home, platform, environ) / "Code/User/mcp.json"
    return cwd / ".mcp.json"


def _root_key(client: str) -> str:
    return "servers" if client == "vscode" else "mcpServers"


def entry_for(
    client: str, target: str | list[str], env: dict[str, str], headers: dict[str, str]
) -> dict[str, Any]:
    """The client's entry for a URL (`str`) or an argv (`list`)."""
    if isinstance(target, str):
        if client == "claude-desktop":
            raise CLIError(
                "Claude Desktop starts only local (stdio) servers from its config file: add a "
                "remote server in its Settings > Connectors, or install a server file or command"
            )
        entry: dict[str, Any] = (
            {"url": target} if client == "cursor" else {"type": "http", "url": target}
        )
        if headers:
            entry["headers"] = headers
        return entry
    if headers:
        raise CLIError("--header is for servers at a URL; a local server takes --env")
    entry = {"type": "stdio"} if client in ("claude-code", "vscode") else {}
    entry.update(command=target[0], args=target[1:])
    if env:
        entry["env"] = env
    return entry


def merge_entry(document: dict[str, Any], client: str, name: str, entry: dict[str, Any]) -> bool:
    """Put `entry` under the client's servers key; True when it replaced one of that name."""
    key = _root_key(client)
    servers = document.get(key)
    if servers is None:
        servers = document[key] = {}
    if not isinstance(servers, dict):
        raise CLIError(f'"{key}" in the configuration is not an object: fix the file first')
    replaced = name in servers
    servers[name] = entry
    return replaced


def _read(path: Path) -> tuple[dict[str, Any], bool]:
    """The file's object (empty when there is no file), and whether it is plain JSON: JSONC
    (comments, trailing commas: VS Code's files, and any client's) reads too, but rewriting
    it drops the comments, so the caller keeps a copy."""
    from ..host.jsonc import is_strict_json, loads

    if not path.exists():
        return {}, True
    try:
        text = path.read_text(encoding="utf-8")
        document = loads(text)
    except ValueError as exc:
        raise CLIError(
            f"{path} is not valid JSON or JSONC ({exc}): fix it, or move it aside"
        ) from None
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror}") from None
    if not isinstance(document, dict):
        raise CLIError(f"{path} does not hold a JSON object: fix it, or move it aside")
    return document, not text.strip() or is_strict_json(text)


def _write(path: Path, document: dict[str, Any], *, keep_original: bool = False) -> Path | None:
    """Write the whole file at once (a temporary file renamed over it); with `keep_original`,
    the file as it was is copied to `NAME.bak` first, and that path is returned."""
    import shutil

    backup = path.with_name(path.name + ".bak") if keep_original else None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if backup is not None:
            shutil.copy2(path, backup)
        temporary = path.with_name(path.name + ".mcpkit-tmp")
        temporary.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        raise CLIError(f"cannot write {path}: {exc.strerror}") from None
    return backup


def _server_target(server: str) -> tuple[str | list[str], str]:
    """(URL or argv, default name). A `.py` file is checked by loading it."""
    from ..client.target import is_url
    from .arguments import resolve_target
    from .loader import split_spec

    try:
        target = resolve_target(server, None)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if isinstance(target, str) and is_url(target):
        from urllib.parse import urlsplit

        return target, (urlsplit(target).hostname or "server").split(".")[0]
    if isinstance(target, list):  # a server file: absolute paths, so it runs from anywhere
        from .serve import load_server

        path, obj = split_spec(server)
        loaded = load_server(server)
        absolute = str(Path(path).resolve()) + (f":{obj}" if obj else "")
        name = getattr(getattr(loaded, "info", None), "name", None) or Path(path).stem
        return [sys.executable, "-m", "mcpkit", "run", absolute], str(name)
    argv = shlex.split(target)
    words = [a for a in argv[1:] if not a.startswith("-")]  # `npx -y pkg`, `uvx tool`, ...
    return argv, Path(words[0] if words else argv[0]).stem


FileOpt = Annotated[
    Path | None, typer.Option("--file", help="Write this file instead (same shape).")
]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Print the file and entry; write nothing.")
]
ApproveOpt = Annotated[
    bool, typer.Option("--approve", help="Approve its tools for mcpkit's hosts now (starts it).")
]


def install(
    client: Annotated[ClientName, typer.Argument(help="The MCP client to configure.")],
    server: Annotated[
        str,
        typer.Argument(
            metavar="SERVER",
            help="server.py[:OBJ] (run with this Python), a URL, or a command in one string.",
        ),
    ],
    name: Annotated[
        str | None, typer.Option("--name", "-n", help="Entry name (default: the server's name).")
    ] = None,
    env: Annotated[
        list[str] | None,
        typer.Option(
            "--env", "-e", help="KEY=VALUE for a local server (repeatable).", show_default=False
        ),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option(
            "--header", "-H", help="'Name: value' for a URL (repeatable).", show_default=False
        ),
    ] = None,
    scope: Annotated[
        Scope, typer.Option("--scope", help="user: the client's own file; project: this folder's.")
    ] = Scope.user,
    file: FileOpt = None,
    dry_run: DryRunOpt = False,
    approve: ApproveOpt = False,
) -> None:
    """Add a server to Claude Desktop, Claude Code, Cursor, VS Code or an mcpServers file."""
    from .client_commands import option_pairs
    from .provenance import pin_command

    target, default_name = _server_target(server)
    variables = option_pairs(env, "=", "KEY=VALUE")
    if isinstance(target, list):  # `npx pkg` is written `npx pkg@X.Y.Z` (host/provenance.py)
        target = pin_command(target, variables)
    entry = entry_for(client.value, target, variables, option_pairs(header, ":", "'Name: value'"))
    path = file or config_path(client.value, scope.value)
    entry_name = name or default_name
    document, plain = _read(path)
    replaced = merge_entry(document, client.value, entry_name, entry)
    if dry_run:
        typer.echo(f"# {path} ({_root_key(client.value)}.{entry_name}); --dry-run: not written")
        typer.echo(json.dumps({entry_name: entry}, indent=2))
        return
    backup = _write(path, document, keep_original=not plain)
    verb = "replaced" if replaced else "added"
    kept = f" (its comments are not kept: the file as it was is in {backup})" if backup else ""
    typer.echo(
        f"{verb} {entry_name!r} in {path}{kept}; restart {_TITLES[client.value]} to load it",
        err=True,
    )
    if approve:  # the new server's catalogue, approved when it is configured (quarantine)
        from .pins import approve_configured

        approve_configured(path, entry_name)
