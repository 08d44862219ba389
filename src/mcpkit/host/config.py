"""`mcpServers` configuration, in the format hosts already use (Claude Desktop, Claude Code,
`.mcp.json`), with a few host settings of our own per server:

    {"mcpServers": {
        "shipping":  {"command": "python", "args": ["shipping.py"], "env": {}, "cwd": ".",
                      "trusted": true},
        "returns":   {"type": "http", "url": "http://127.0.0.1:8102/mcp",
                      "headers": {"Authorization": "Bearer ${RETURNS_TOKEN}"},
                      "hostOwned": ["customer_id"]}}}

`"trustNewTools": true` offers the tools a server adds without asking (`host.pins`).

`"cassette": "FILE.jsonl"` in an entry serves that recording instead of the server (`mcpkit
replay`); `"record": "FILE.jsonl"` records a stdio server's messages to it, `"redact"` naming
more secrets to leave out (`mcpkit record`, docs/record-replay.md).

`timeout` bounds each request to the server; `startTimeout` bounds its start-up (spawn or
reach, handshake, first `tools/list`), by default `max(timeout, 30)`: a server that is slow
to start is not cut off by a short request deadline (and restarted for ever).

`"start": "lazy"` offers the server's tools from the record of its last start and starts it on
the first call (`"eager"`, the default, starts it with the host); `"idleTimeout": SECONDS` stops
a lazy server after that long without a call (docs/host-runtime.md, "Start on first use").

`${VAR}` and `${VAR:-default}` expand from the environment in every string. VS Code's files
(`"servers"` in `mcp.json`, `"mcp": {"servers"}` in `settings.json`) are read as well, and every
file may be JSONC (comments, trailing commas: `jsonc.py`).
"""

from __future__ import annotations

import os
import platform
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import jsonc
from .consent import ConsentRules
from .deadlines import Deadline, ToolDeadlines, parse_timeouts
from .sandbox import Sandbox

#: `${VAR}`, `${VAR:-default}`, and VS Code's spelling `${env:VAR}`.
_VAR = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")
#: The least `startTimeout` defaults to (seconds), whatever the server's `timeout`.
DEFAULT_START_S = 30.0


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the file, server and field."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    name: str
    transport: str  # "stdio" or "http"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    trusted: bool = False
    #: `"trustNewTools": true`: tools this server adds (or offers on first sight) are pinned and
    #: offered at once instead of withheld until the user approves them (`host.pins`).
    trust_new_tools: bool = False
    #: Argument names only the host may fill (identity etc.); the model can never set them.
    host_owned: Mapping[str, Any] = field(default_factory=dict)
    timeout: float = 60.0
    #: Seconds from spawn (or first request) to the first tool list (None: the default).
    start_timeout: float | None = None
    disabled: bool = False
    auth: Mapping[str, Any] = field(default_factory=dict)
    #: A short prefix for this server's tool names (`alias__tool`) instead of the config key.
    alias: str | None = None
    #: `consent` rules for this server's tools (their own names), and per-tool `timeouts`.
    consent: ConsentRules = field(default_factory=ConsentRules)
    deadlines: ToolDeadlines | None = None
    #: W3C baggage goes to this server in `_meta` (telemetry on): trusted servers get it,
    #: others only with `"baggage": true` (baggage can carry user ids, tenants, flags).
    baggage: bool | None = None
    #: "eager": started with the host; "lazy": offered from its record, started on first use.
    start: str = "eager"
    #: A lazy server is stopped after this many seconds without a call (None: never).
    idle_timeout: float | None = None
    #: A stdio server run under bubblewrap (`sandbox.py`); None: with the user's rights.
    sandbox: Sandbox | None = None
    #: What a moved package version does at start (`provenance.py`): warn, refuse or off.
    provenance: str = "warn"

    @property
    def forwards_baggage(self) -> bool:
        return self.trusted if self.baggage is None else self.baggage

    @property
    def start_deadline(self) -> float:
        """How long connecting may take (`startTimeout`, else `max(timeout, 30)`)."""
        if self.start_timeout is not None:
            return self.start_timeout
        return max(self.timeout, DEFAULT_START_S)

    def deadline(self, tool: str) -> Deadline:
        """How long a call to `tool` may take (`timeouts`, else the server's `timeout`)."""
        return (self.deadlines or ToolDeadlines(Deadline(self.timeout))).for_tool(tool)

    def client_target(self) -> dict[str, Any]:
        """The entry as `mcpkit.client.Client` takes it."""
        if self.transport == "http":
            return {"type": "http", "url": self.url, "headers": dict(self.headers)}
        return {
            "command": self.command,
            "args": list(self.args),
            "env": dict(self.env),
            "cwd": self.cwd,
            "name": self.name,  # names the server in what the client logs about it
        }


@dataclass(frozen=True, slots=True)
class HostConfig:
    servers: dict[str, ServerConfig]
    source: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)
    #: The environment `${VAR}` expanded from (other sections expand from it too).
    env: Mapping[str, str] | None = None


def expand(value: Any, env: Mapping[str, str], where: str) -> Any:
    """`${VAR}` / `${VAR:-default}` in every string of a JSON value."""
    if isinstance(value, str):

        def repl(m: re.Match[str]) -> str:
            name, default = m.group(1), m.group(2)
            if name in env and env[name] != "":
                return env[name]
            if default is not None:
                return default
            raise ConfigError(
                f"{where}: environment variable {name} is not set (write ${{{name}:-default}} for a default)"
            )

        return _VAR.sub(repl, value)
    if isinstance(value, list):
        return [expand(v, env, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: expand(v, env, f"{where}.{k}") for k, v in value.items()}
    return value


def parse_config(
    data: Any, *, source: str = "<config>", env: Mapping[str, str] | None = None
) -> HostConfig:
    environ = os.environ if env is None else env
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the configuration must be a JSON object")
    servers_raw = servers_of(data)
    if servers_raw is None:
        raise ConfigError(f'{source}: no "mcpServers" object (nor VS Code\'s "servers")')
    servers: dict[str, ServerConfig] = {}
    for name, entry in servers_raw.items():
        where = f"{source}: server {name!r}"
        if not isinstance(name, str) or not _NAME.match(name):
            raise ConfigError(f"{where}: names use letters, digits, '_', '-' and '.'")
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: the entry must be an object")
        servers[name] = _server(name, expand(entry, environ, where), where)
    prefixes = [s.alias or s.name for s in servers.values()]
    clash = sorted({p for p in prefixes if prefixes.count(p) > 1})
    if clash:
        raise ConfigError(f'{source}: tool-name prefixes {clash} are used twice (check "alias")')
    return HostConfig(servers, source, data, environ)


def servers_of(document: Mapping[str, Any]) -> dict[str, Any] | None:
    """The servers object: `mcpServers` (Claude, Cursor, `.mcp.json`), VS Code's `servers`
    (`mcp.json`) or `mcp.servers` (`settings.json`); None when there is none."""
    mcp = document.get("mcp")
    for candidate in (
        document.get("mcpServers"),
        document.get("servers"),
        mcp.get("servers") if isinstance(mcp, Mapping) else None,
    ):
        if isinstance(candidate, dict):
            return candidate
    return None


def _common(e: dict[str, Any], where: str) -> dict[str, Any]:
    """The keys every kind of server entry takes."""
    timeout = float(e.get("timeout", 60.0))
    try:
        runtime = {
            "consent": ConsentRules.parse(e.get("consent")),
            "deadlines": parse_timeouts(e.get("timeouts"), timeout),
            "sandbox": _sandbox(e),
        }
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return {
        "trusted": _bool(e, "trusted", where),
        "trust_new_tools": _bool(e, "trustNewTools", where),
        "disabled": _bool(e, "disabled", where),
        "host_owned": _host_owned(e.get("hostOwned"), where),
        "timeout": timeout,
        "start_timeout": _seconds(e, "startTimeout", where),
        "auth": e.get("auth") or {},
        "alias": _alias(e.get("alias"), where),
        "baggage": _bool(e, "baggage", where) if "baggage" in e else None,
        "start": _start(e.get("start", "eager"), where),
        "idle_timeout": _seconds(e, "idleTimeout", where),
        "provenance": _provenance(e.get("provenance", "warn"), where),
        **runtime,
    }


def _server(name: str, e: dict[str, Any], where: str) -> ServerConfig:
    if "cassette" in e:
        e = _replayed(e, where)
    elif "record" in e:
        e = _recorded(e, where)
    kind = e.get("type")
    common = _common(e, where)
    if "url" in e or kind in ("http", "streamable-http", "sse"):
        if kind == "sse":
            raise ConfigError(
                f'{where}: the deprecated HTTP+SSE transport is not supported; use "type": "http"'
            )
        url = e.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError(f'{where}: "url" must be an http(s) URL')
        headers = e.get("headers") or {}
        if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
            raise ConfigError(f'{where}: "headers" must map names to strings')
        return ServerConfig(name, "http", url=url, headers=headers, **common)
    if kind not in (None, "stdio"):
        raise ConfigError(f'{where}: unknown "type" {kind!r} (use "stdio" or "http")')
    command = e.get("command")
    if not isinstance(command, str) or not command:
        raise ConfigError(f'{where}: a stdio server needs "command" (or give "url" for HTTP)')
    args = e.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
        raise ConfigError(f'{where}: "args" must be a list of strings')
    env = e.get("env") or {}
    if not isinstance(env, dict):
        raise ConfigError(f'{where}: "env" must be an object')
    return ServerConfig(
        name,
        "stdio",
        command=command,
        args=tuple(str(a) for a in args),
        env={k: str(v) for k, v in env.items()},
        cwd=e.get("cwd"),
        **common,
    )


def _replayed(e: dict[str, Any], where: str) -> dict[str, Any]:
    """`"cassette": FILE`: the entry runs `mcpkit replay FILE` on this Python (`env`, `cwd` kept)."""
    cassette = e["cassette"]
    if not isinstance(cassette, str) or not cassette:
        raise ConfigError(f'{where}: "cassette" is the path of a file `mcpkit record` wrote')
    kept = {k: v for k, v in e.items() if k not in ("type", "url", "headers", "command", "args")}
    return {**kept, "command": sys.executable, "args": ["-m", "mcpkit", "replay", cassette]}


def _recorded(e: dict[str, Any], where: str) -> dict[str, Any]:
    """`"record": FILE` (and `"redact"`: more name patterns): the stdio server runs behind
    `mcpkit record --out FILE`, which writes every message to that cassette."""
    out, rules, args = e["record"], e.get("redact") or [], e.get("args") or []
    if not isinstance(out, str) or not out:
        raise ConfigError(f'{where}: "record" is the cassette file `mcpkit record` writes')
    if not isinstance(rules, list) or not all(isinstance(rule, str) for rule in rules):
        raise ConfigError(f'{where}: "redact" is a list of name patterns, like ["*session*"]')
    if not isinstance(e.get("command"), str) or not isinstance(args, list):
        raise ConfigError(f'{where}: "record" records a stdio server: give "command" and "args"')
    flags = [word for rule in rules for word in ("--redact", rule)]
    tail = [e["command"], *(str(arg) for arg in args)]
    recorder = ["-m", "mcpkit", "record", "--out", out, "--quiet", *flags, "--", *tail]
    return {**e, "command": sys.executable, "args": recorder}


def _bool(e: dict[str, Any], key: str, where: str) -> bool:
    value = e.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f'{where}: "{key}" must be true or false')
    return value


def _seconds(e: dict[str, Any], key: str, where: str) -> float | None:
    value = e.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f'{where}: "{key}" must be a positive number of seconds')
    return float(value)


def _start(value: Any, where: str) -> str:
    if value not in ("eager", "lazy"):
        raise ConfigError(f'{where}: "start" is "eager" (with the host) or "lazy" (on first use)')
    return str(value)


def _sandbox(e: dict[str, Any]) -> Sandbox | None:
    sandbox = Sandbox.parse(e.get("sandbox"))
    if sandbox is not None and ("url" in e or e.get("type") not in (None, "stdio")):
        raise ValueError('"sandbox" runs a local (stdio) server; this one has "url"')
    return sandbox


def _provenance(value: Any, where: str) -> str:
    if value not in ("warn", "refuse", "off"):
        raise ConfigError(f'{where}: "provenance" is "warn", "refuse" or "off"')
    return str(value)


def _alias(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", value):
        raise ConfigError(f'{where}: "alias" is 1-32 letters, digits, "_" or "-"')
    return value


def _host_owned(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return dict.fromkeys(value)
    if isinstance(value, dict):
        return dict(value)
    raise ConfigError(
        f'{where}: "hostOwned" is a list of argument names or an object of name → value'
    )


def load_config(
    path: str | os.PathLike[str] | None = None, *, env: Mapping[str, str] | None = None
) -> HostConfig:
    """The given file; else `.mcp.json` here, then Claude Code's and Claude Desktop's files."""
    candidates = [Path(path)] if path is not None else default_config_paths()
    for candidate in candidates:
        if candidate.is_file():
            try:
                data = jsonc.loads(candidate.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise ConfigError(f"{candidate}: not valid JSON: {exc}") from None
            if path is None and (not isinstance(data, dict) or "mcpServers" not in data):
                continue
            environ = os.environ if env is None else env
            return parse_config(data, source=str(candidate), env={**_vscode(candidate), **environ})
    if path is not None:
        raise ConfigError(f"{path}: no such file")
    raise ConfigError(
        "no MCP configuration found (looked in: " + ", ".join(map(str, candidates)) + ")"
    )


def _vscode(path: Path) -> dict[str, str]:
    """VS Code's predefined variables for a config file (`${workspaceFolder}` and kin): the
    workspace is the folder holding `.vscode/`, else the file's own folder. A variable of the
    same name in the environment wins; `${input:...}` (asked by VS Code) stays as written."""
    folder = path.resolve().parent
    if folder.name == ".vscode":
        folder = folder.parent
    return {
        "workspaceFolder": str(folder),
        "workspaceFolderBasename": folder.name,
        "userHome": str(Path.home()),
        "pathSeparator": os.sep,
    }


def default_config_paths() -> list[Path]:
    home = Path.home()
    paths = [Path.cwd() / ".mcp.json", home / ".claude.json"]
    system = platform.system()
    if system == "Darwin":
        paths.append(home / "Library/Application Support/Claude/claude_desktop_config.json")
    elif system == "Windows":
        paths.append(Path(os.environ.get("APPDATA", home)) / "Claude/claude_desktop_config.json")
    else:
        paths.append(
            Path(os.environ.get("XDG_CONFIG_HOME", home / ".config"))
            / "Claude/claude_desktop_config.json"
        )
    return paths
