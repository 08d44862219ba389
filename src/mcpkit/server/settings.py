"""Server settings from the environment (`MCPKIT_*`), read when serving starts, never at import.

| variable | type | default | what it sets |
|---|---|---|---|
| `MCPKIT_HOST` | str | `127.0.0.1` | HTTP bind address (loopback unless you say otherwise) |
| `MCPKIT_PORT` | int 0-65535 | `8000` | HTTP port |
| `MCPKIT_LOG_LEVEL` | debug, info, warning, error, critical | unset | the `mcpkit` loggers and uvicorn |
| `MCPKIT_LOG_FORMAT` | text, json | `text` | json: one JSON object a line on stderr, with trace and request ids |
| `MCPKIT_TELEMETRY` | bool | `false` | OpenTelemetry spans and metrics (`mcpkit[otel]`; `OTEL_*` configure the export) |
| `MCPKIT_MAX_BODY_BYTES` | int > 0 | 4 MiB (the transport's) | largest HTTP request body (413 above) |
| `MCPKIT_MAX_SESSIONS` | int > 0 | 10000 (the transport's) | live 2025-11-25 HTTP sessions |
| `MCPKIT_MASK_ERRORS` | bool | `true` | hide unexpected handler exceptions from clients |
| `MCPKIT_TOOL_TIMEOUT` | seconds > 0, or empty | none | timeout of tools registered without `timeout=` |
| `MCPKIT_DRAIN_TIMEOUT` | seconds >= 0 | `20` | on SIGTERM, how long requests and tasks in flight may take to finish |
| `MCPKIT_REDIS_URL` | str | unset | keep every shared part in this Redis (`Server.use_redis`) |
| `MCPKIT_ALLOWED_HOSTS` | comma-separated names, `*` | loopback names | `Host` headers the HTTP endpoint accepts (behind a proxy: the public name) |
| `MCPKIT_SESSION_ID_PREFIX` | `[A-Za-z0-9._-]`, ≤ 32 | none | starts this instance's 2025-11-25 session ids (what a proxy routes on) |

Precedence: an argument given in code or on the command line, then the environment, then the
default. Booleans accept 1/0, true/false, yes/no, on/off. A bad value stops the server with one
line naming the variable, the value and what is expected.

Plain dataclass rather than pydantic-settings: the environment is read once per process, and
the server does not import pydantic at start-up (see `server/signature.py`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from .env import ENV_PREFIX, SettingsError, read_setting

__all__ = ["ENV_PREFIX", "Settings", "SettingsError"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Settings:
    """What a deployment may set without code changes (see the module docstring)."""

    host: str = "127.0.0.1"
    port: int = 8000
    #: None: logging is left as the application configured it (uvicorn logs warnings).
    log_level: str | None = None
    #: "json": log records as JSON lines with trace and request ids (`mcpkit.telemetry.logs`).
    log_format: str = "text"
    #: Read by `Server()` itself (`telemetry=None`); listed here for the documentation.
    telemetry: bool = False
    #: None: the transport's own default.
    max_body_bytes: int | None = None
    max_sessions: int | None = None
    #: True (the default): an unexpected exception in a handler reaches the client as a generic
    #: error with a reference id, the traceback only in the server log. False shows the
    #: exception text to the client (development only: it can leak secrets).
    mask_errors: bool = True
    tool_timeout: float | None = None
    #: On SIGTERM (HTTP): seconds for requests and tasks in flight to finish (see `drain`).
    drain_timeout: float = 20.0
    #: Redis for every shared part: event bus, tasks, handles, single-use state (see
    #: `Server.use_redis`). None: what the server was built with (in process by default).
    redis_url: str | None = None
    #: HTTP `Host` names accepted (DNS-rebinding defence); None: loopback names only.
    allowed_hosts: tuple[str, ...] | None = None
    #: The start of this instance's 2025-11-25 session ids (a proxy routes sessions on it).
    session_id_prefix: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from `MCPKIT_*` variables; unset ones keep their defaults."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            if ENV_PREFIX + f.name.upper() in env:
                values[f.name] = read_setting(f.name, env)
        return cls(**values)

    @classmethod
    def read(cls, field: str, environ: Mapping[str, str] | None = None) -> Any:
        """One setting: its variable's value, or the default when it is unset."""
        return read_setting(field, environ)

    def pick(self, name: str, given: T | None) -> T:
        """`given` when it is not None, else this setting."""
        return given if given is not None else getattr(self, name)

    def configure_logging(self) -> None:
        """With a `log_level` or the json format: set the `mcpkit` loggers' level, and give
        the root logger a stderr handler (JSON lines with `log_format="json"`) when the
        application configured none (stdout is the stdio transport's). Otherwise nothing
        changes (Python still prints warnings and errors to stderr)."""
        if self.log_level is None and self.log_format == "text":
            return
        if self.log_level is not None:
            logging.getLogger("mcpkit").setLevel(getattr(logging, self.log_level.upper()))
        root = logging.getLogger()
        if root.handlers:
            return
        if self.log_format == "json":
            from ..telemetry.logs import json_handler

            root.addHandler(json_handler())
            root.setLevel(logging.WARNING)
        else:
            logging.basicConfig(
                level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
            )

    def scope_requests(self, server: Any) -> None:
        """JSON logs without telemetry: a middleware puts the request's id in log records."""
        if self.log_format == "json" and server.telemetry is None:
            from ..telemetry.logs import request_scope

            server.add_middleware(request_scope)
