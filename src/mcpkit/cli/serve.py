"""`mcpkit run`: load the server, check the port, say what is served, serve (or reload)."""

from __future__ import annotations

import logging
import os
import shlex
import socket
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import CLIError

if TYPE_CHECKING:
    from ..server.settings import Settings

__all__ = ["load_server", "serve", "start_line"]


def load_server(spec: str) -> Any:
    """The server named by `FILE[:OBJ]` or `module[:OBJ]`; CLIError in one line otherwise."""
    from .loader import find_server, load_module, split_spec

    path, name = split_spec(spec)
    try:
        module = load_module(path)
    except SyntaxError as exc:
        where = f"{exc.filename or path}:{exc.lineno}" if exc.lineno else path
        raise CLIError(f"{where}: syntax error: {exc.msg}; fix it and run again") from None
    except FileNotFoundError as exc:
        raise CLIError(f"{exc}: give a server file (FILE.py[:OBJ]) or a module name") from None
    except ModuleNotFoundError as exc:
        raise CLIError(
            f"cannot import {path}: {exc}; is it installed, or the path right?"
        ) from None
    except Exception as exc:
        raise CLIError(f"{path} failed to import: {_where(exc, path)}") from None
    try:
        return find_server(module, name)
    except LookupError as exc:
        raise CLIError(str(exc)) from None


def _where(exc: BaseException, path: str) -> str:
    """`NameError: name 'x' is not defined (server.py line 3)`: the deepest frame in `path`."""
    target = Path(path).name
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).name == target:
            line = frame.lineno
    at = f" ({target} line {line})" if line is not None else ""
    return f"{type(exc).__name__}: {exc}{at}"


def start_line(server: Any, transport: str, host: str, port: int) -> str:
    """`mcpkit: serving weather 1.0 (2 tools) at http://127.0.0.1:8000/mcp` (or `over stdio`)."""
    info = getattr(server, "info", None)
    name = getattr(info, "name", None) or type(server).__name__
    version = getattr(info, "version", None)
    tools = getattr(server, "tools", None)
    count = f" ({len(tools)} tool{'' if len(tools) == 1 else 's'})" if tools is not None else ""
    label = f"{name} {version}" if version else name
    if transport == "stdio":
        return f"mcpkit: serving {label}{count} over stdio"
    shown = f"[{host}]" if ":" in host else host
    return f"mcpkit: serving {label}{count} at http://{shown}:{port}/mcp (Ctrl-C to stop)"


def check_port(host: str, port: int) -> None:
    """Bind once, as uvicorn will, to say in one line why serving would fail."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise CLIError(
                f"cannot listen on {host}:{port}: {reason.lower()}; choose another --port "
                "(or stop what uses it)"
            ) from None


def _is_mcpkit_server(obj: Any) -> bool:
    from ..server import Server

    return isinstance(obj, Server)


def _configure_logging(level: str, json: bool = False) -> None:
    if json:  # MCPKIT_LOG_FORMAT=json: JSON lines with trace and request ids
        from ..telemetry.logs import json_handler

        logging.basicConfig(level=level.upper(), handlers=[json_handler()])
        return
    logging.basicConfig(
        stream=sys.stderr, level=level.upper(), format="%(levelname)s %(name)s: %(message)s"
    )


def serve(
    spec: str,
    *,
    transport: str,
    host: str | None,
    port: int | None,
    log_level: str | None,
    reload: bool = False,
    quiet: bool = False,
    limits: dict[str, Any] | None = None,
    workers: int = 1,
    redis: str | None = None,
) -> None:
    """Serve until stopped; Ctrl-C ends it with status 130 (by `Server.run`). What the command
    line leaves out comes from the `MCPKIT_*` settings (`server/settings.py`), then defaults.
    `workers` > 1: that many processes on one port (see `mcpkit.cli.workers`); `redis`: share
    what instances share through it (`MCPKIT_REDIS_URL`)."""
    from .workers import LEGACY_REFUSAL, check_workers, serve_workers, worker_index

    settings = _settings(redis)
    host = settings.pick("host", host)
    port = settings.pick("port", port)
    log_level = log_level or settings.log_level or "warning"
    given = {k: v for k, v in (limits or {}).items() if v is not None}
    if reload:
        _serve_reloading(
            spec, transport=transport, host=host, port=port, log_level=log_level, limits=given
        )
        return
    server = load_server(spec)
    worker = worker_index()
    if workers > 1:
        if settings.redis_url is not None and _is_mcpkit_server(server):
            server.use_redis(settings.redis_url)
        check_workers(server, workers, transport, reload)
        check_port(host, port)
        if not quiet:
            line = start_line(server, transport, host, port)
            print(line.replace("/mcp ", f"/mcp with {workers} workers "), file=sys.stderr)
        serve_workers(_run_argv(spec, "http", host, port, log_level, given), workers)
        return
    if transport == "http" and worker is None:
        check_port(host, port)
    _configure_logging(log_level, json=settings.log_format == "json")
    if not quiet and worker is None:
        print(start_line(server, transport, host, port), file=sys.stderr, flush=True)
    options: dict[str, Any] = {"host": host, "port": port}
    if transport == "http":
        options.update(given)
        if _is_mcpkit_server(server):
            options["log_level"] = log_level  # uvicorn's own messages
        if worker is not None:
            options["reuse_port"] = True
            if worker[1] > 1:
                server.refuse_legacy(LEGACY_REFUSAL)
    server.run(transport, **options)


def _settings(redis: str | None) -> Settings:
    """The `MCPKIT_*` settings, `redis` (`--redis`) standing for `MCPKIT_REDIS_URL`."""
    from ..server.settings import Settings, SettingsError

    if redis is not None:
        os.environ["MCPKIT_REDIS_URL"] = redis  # read when serving starts, workers included
    try:
        return Settings.from_env()
    except SettingsError as exc:
        raise CLIError(str(exc)) from None


def _run_argv(
    spec: str, transport: str, host: str, port: int, log_level: str, limits: dict[str, Any]
) -> list[str]:
    """`mcpkit run` of one child process (a reloaded server, a worker)."""
    argv = [sys.executable, "-m", "mcpkit", "run", spec, "--transport", transport]
    argv += ["--host", host, "--port", str(port), "--log-level", log_level]
    for name, value in limits.items():
        argv += ["--" + name.replace("_", "-"), str(value)]
    return argv


def _serve_reloading(
    spec: str, *, transport: str, host: str, port: int, log_level: str, limits: dict[str, Any]
) -> None:
    """Run `mcpkit run` (without --reload) in a child; restart it when a file changes."""
    import watchfiles

    from .loader import split_spec

    path = Path(split_spec(spec)[0])
    folder = path.resolve().parent if path.suffix == ".py" else Path.cwd()
    if transport == "http":
        check_port(host, port)
    argv = _run_argv(spec, transport, host, port, log_level, limits)

    def restarted(changes: set[tuple[Any, str]]) -> None:
        names = sorted({Path(p).name for _, p in changes})
        print(f"mcpkit: {', '.join(names)} changed; restarting", file=sys.stderr, flush=True)

    print(f"mcpkit: watching {folder} for changes", file=sys.stderr, flush=True)
    watchfiles.run_process(
        folder, target=shlex.join(argv), target_type="command", callback=restarted, debounce=400
    )
    raise KeyboardInterrupt  # run_process returns only when interrupted: status 130
