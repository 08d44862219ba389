"""The host's own settings, from the `"host"` object beside `mcpServers`:

    "host": {"startupTimeout": 5, "restart": {"initial": 0.5, "max": 30},
             "retry": {"attempts": 3, "initial": 0.2, "max": 2},
             "audit": "audit.jsonl", "log": "host.log", "pins": "tool-pins.json",
             "background": {"after": 10},
             "cache": true, "records": "server-records/"}

- `startupTimeout`: seconds the first model round waits for servers; later ones join when ready.
- `restart`: the backoff between reconnection attempts to a server that went down.
- `retry`: how often a tool call that failed is tried in all, when repeating it is safe, and
  the backoff between tries (`retry.py`); `"attempts": 1` never repeats a call.
- `audit`: append one JSON line per tool call here (off when absent).
- `log`: where server noise (invalid stdout lines, stderr) and link changes are written.
- `pins`: the tool pin file.
- `background`: when a call its server runs as a task goes to the background
  (`background_store.py`).
- `cache`: keep the records of lazy servers across runs (`records.py`); `false` (or
  `--no-cache`) keeps none: a lazy server is then started with the host to be listed.
- `records`: the directory of those records (default: the state directory's `servers/`).

`${VAR}` and `${VAR:-default}` expand here as in `mcpServers` (the same `expand`), paths
included; relative paths are relative to the configuration file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .background_store import BackgroundSettings
from .backoff import Backoff
from .config import ConfigError, HostConfig, expand
from .consent import ConsentRules
from .retry import RetryPolicy

if TYPE_CHECKING:
    from .catalog import ToolSettings

DEFAULT_STARTUP_TIMEOUT = 5.0
_KEYS = {
    "startupTimeout",
    "restart",
    "retry",
    "audit",
    "log",
    "pins",
    "background",
    "cache",
    "records",
}


@dataclass(frozen=True, slots=True)
class HostSettings:
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    restart: Backoff = field(default_factory=Backoff)
    audit: Path | None = None
    log: Path | None = None
    pins: Path | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    background: BackgroundSettings = field(default_factory=BackgroundSettings)
    #: Keep lazy servers' records across runs (`"cache": false`, `--no-cache`: none).
    cache: bool = True
    records: Path | None = None

    @classmethod
    def from_config(cls, config: HostConfig) -> HostSettings:
        where = f'{config.source or "<config>"}: "host"'
        raw = config.raw.get("host")
        if raw is None:
            return cls()
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{where} must be an object")
        raw = expand(dict(raw), os.environ if config.env is None else config.env, where)
        unknown = set(raw) - _KEYS
        if unknown:
            raise ConfigError(
                f"{where} has unknown keys {sorted(unknown)} ({', '.join(sorted(_KEYS))})"
            )
        base = Path(config.source).parent if config.source and config.source != "<config>" else None
        startup = raw.get("startupTimeout", DEFAULT_STARTUP_TIMEOUT)
        if isinstance(startup, bool) or not isinstance(startup, int | float) or startup < 0:
            raise ConfigError(f'{where}: "startupTimeout" must be a number of seconds ≥ 0')
        try:
            restart = Backoff.parse(raw.get("restart"), Backoff())
        except ValueError as exc:
            raise ConfigError(f'{where}: "restart": {exc}') from None
        try:
            retry = RetryPolicy.parse(raw.get("retry"))
        except ValueError as exc:
            raise ConfigError(f'{where}: "retry": {exc}') from None
        audit, log, pins, records = (
            _path(raw.get(key), base, f'{where}: "{key}"')
            for key in ("audit", "log", "pins", "records")
        )
        try:
            background = BackgroundSettings.parse(raw.get("background"), base)
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        cache = raw.get("cache", True)
        if not isinstance(cache, bool):
            raise ConfigError(f'{where}: "cache" must be true or false')
        return cls(float(startup), restart, audit, log, pins, retry, background, cache, records)


def _path(value: Any, base: Path | None, where: str) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where} must be a file path")
    path = Path(value).expanduser()
    return path if path.is_absolute() or base is None else base / path


def agent_consent(config: HostConfig, agent: str | None) -> ConsentRules:
    """The `consent` rules of one entry of the config's `agents`."""
    if agent is None:
        return ConsentRules()
    spec = (config.raw.get("agents") or {}).get(agent)
    if not isinstance(spec, Mapping):
        return ConsentRules()
    try:
        return ConsentRules.parse(spec.get("consent"))
    except ValueError as exc:
        raise ConfigError(f"{config.source or '<config>'}: agent {agent!r}: {exc}") from None


def agent_tools(config: HostConfig, agent: str | None) -> ToolSettings:
    """The `tools` settings of one entry of the config's `agents` (defaults without one)."""
    from .catalog import ToolSettings

    spec = (config.raw.get("agents") or {}).get(agent) if agent is not None else None
    if not isinstance(spec, Mapping):
        return ToolSettings()
    where = f"{config.source or '<config>'}: agent {agent!r}: tools"
    return ToolSettings.from_config(spec.get("tools"), where)
