"""Serving `StreamableHTTPApp` with uvicorn (uvloop + httptools when installed), loopback by
default (TR-HTTP-04). Imported only when serving, so `mcpkit.server.transports.http` stays light.

Limits (nginx's defaults; see README "Limits (HTTP)"): the request head within
`header_timeout` seconds (408), header lines up to `max_header_line` bytes, the head up to
`max_header_bytes` and `max_headers` fields (431), a body part within `body_timeout` of the
one before (408), `max_connections` open connections (503 + Retry-After), idle keep-alive
connections closed after `keep_alive_timeout`. The app's own options (`max_body_size` →
413, ...) pass through.

Connections: the soft file-descriptor limit is raised to the hard one, and "auto" caps
are sized from it (`budget`): `max_connections` all but 100 descriptors, and
`max_listen_streams` (listen streams of both eras) a tenth fewer, kept for calls, so
that listeners never starve calls. Refusals are logged once per 10 s with their count.

On SIGTERM (or Ctrl-C) the instance drains before it exits: it stops accepting
connections, reports not ready (`server.draining`), ends listen streams with their result
(SUB-11) and 2025-11-25 GET streams, starts no new task, stream or session (503 +
Retry-After for those), answers what arrives on open connections with `Connection: close`,
and gives requests and tasks in flight `drain_timeout` seconds (`MCPKIT_DRAIN_TIMEOUT`,
20) to finish; tasks still running then fail with a reason (TASK-17).

`MCPKIT_REDIS_URL` shares every part several instances need through Redis
(`Server.use_redis`). `reuse_port`: bind with SO_REUSEPORT, so that several processes
serve one port and the kernel spreads connections over them (`mcpkit run --workers`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
from typing import TYPE_CHECKING, Any, Literal

from ...protocol.errors import InternalError
from .http import StreamableHTTPApp
from .http_limits import HttpLimits
from .tuning import tune_gc

if TYPE_CHECKING:
    from ..server import Server
    from ..settings import Settings
    from .uvicorn_adapter import DrainingServer

log = logging.getLogger("mcpkit.http")


def serve_http(
    server: Server,
    *,
    host: str | None = None,
    port: int | None = None,
    path: str = "/mcp",
    log_level: str | None = None,
    proxy_headers: bool = False,
    header_timeout: float | None = 60.0,
    body_timeout: float | None = 60.0,
    keep_alive_timeout: int = 5,
    max_header_line: int = 8 * 1024,
    max_header_bytes: int = 32 * 1024,
    max_headers: int = 100,
    max_connections: int | Literal["auto"] | None = "auto",
    max_listen_streams: int | Literal["auto"] | None = "auto",
    drain_timeout: float | None = None,
    reuse_port: bool = False,
    **options: Any,
) -> None:
    """Serve with uvicorn (uvloop + httptools when installed). Loopback by default (TR-HTTP-04).
    Arguments left out come from `MCPKIT_*` settings (host, port, log level, body and session
    limits), then the defaults. Limits, connections, draining and Redis: see the module."""
    from ..settings import Settings

    settings = Settings.from_env()
    settings.configure_logging()
    settings.scope_requests(server)
    host, port = settings.pick("host", host), settings.pick("port", port)
    log_level = log_level or settings.log_level or "warning"
    drain_timeout = settings.pick("drain_timeout", drain_timeout)
    _settle(server, settings, options, host)
    max_connections, options["max_listen_streams"] = _caps(max_connections, max_listen_streams)
    from . import uvicorn_adapter as adapter

    limits = (header_timeout, body_timeout, max_header_line, max_header_bytes, max_headers)
    protocol = adapter.protocol_for(HttpLimits(*limits, max_connections))
    # The protocol times bodies out; the app does only where it cannot (h11).
    app = StreamableHTTPApp(
        server, path=path, body_timeout=body_timeout if protocol is None else None, **options
    )
    config = _config(
        app,
        settings,
        log_level,
        host=host,
        port=port,
        http=protocol or "h11",
        timeout_keep_alive=keep_alive_timeout,
        h11_max_incomplete_event_size=max_header_bytes,
        # Loopback by default: X-Forwarded-* are not trusted unless the caller asks for it.
        proxy_headers=proxy_headers,
    )
    sockets = [_shared_port(host, port)] if reuse_port else None
    adapter.DrainingServer(config, _Stopping(server, app, drain_timeout), protocol).run(sockets)


def _config(app: StreamableHTTPApp, settings: Settings, log_level: str, **options: Any) -> Any:
    """uvicorn's `Config`: `options`, and what is the same for every mcpkit server."""
    import uvicorn

    return uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        # JSON logs: uvicorn's records go through the root logger's JSON handler too.
        log_config=None if settings.log_format == "json" else uvicorn.config.LOGGING_CONFIG,
        lifespan="on",
        # MCP has no WebSocket transport: without this uvicorn loads `websockets` (about
        # 2.4 MB resident) into every server. An Upgrade request is served as plain HTTP.
        ws="none",
        loop=_loop_impl(),
        timeout_graceful_shutdown=1,  # after the drain (see _Stopping.drain)
        **options,
    )


def _settle(server: Server, settings: Settings, options: dict[str, Any], host: str) -> None:
    """The app's options and the server's Redis from the `MCPKIT_*` settings, where the
    caller gave none; a warning when Host headers would refuse the address served."""
    if settings.redis_url is not None:
        server.use_redis(settings.redis_url)
    if settings.max_body_bytes is not None:
        options.setdefault("max_body_size", settings.max_body_bytes)
    if settings.max_sessions is not None and server.legacy:
        options.setdefault("max_sessions", settings.max_sessions)
    if settings.session_id_prefix is not None and server.legacy:
        options.setdefault("session_id_prefix", settings.session_id_prefix)
    if settings.allowed_hosts is not None:
        options.setdefault("allowed_hosts", list(settings.allowed_hosts))
    if host not in ("127.0.0.1", "localhost", "::1") and "allowed_hosts" not in options:
        log.warning(
            "serving on %s but only loopback Host headers are allowed; pass allowed_hosts", host
        )


def _caps(
    connections: int | Literal["auto"] | None, listeners: int | Literal["auto"] | None
) -> tuple[int | None, int | None]:
    """`max_connections` and `max_listen_streams`, "auto" sized from the descriptor limit
    (raised first) or from the connections given."""
    from .budget import budget_for, raise_fd_limit, split

    fds = raise_fd_limit()
    if connections == "auto":
        connections = budget_for(fds).max_connections
    if listeners == "auto":
        listeners = split(connections).max_listen_streams if connections is not None else None
    return connections, listeners


def _shared_port(host: str, port: int) -> socket.socket:
    """A listening socket other processes of this user may bind too (SO_REUSEPORT)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _loop_impl() -> str:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


class _Stopping:
    """How `serve_http` stops (`uvicorn_adapter.Lifecycle`): the first SIGINT or SIGTERM says
    so in one line and drains; a second Ctrl-C stops at once (status 130)."""

    def __init__(self, mcp_server: Server, app: StreamableHTTPApp, drain_timeout: float) -> None:
        self._mcp_server = mcp_server
        self._app = app
        self._drain_timeout = drain_timeout
        self._stopping: asyncio.Task[None] | None = None

    def started(self) -> None:
        tune_gc()

    def stop_now(self) -> None:
        loop = asyncio.get_running_loop()
        self._stopping = loop.create_task(self._stop_now())  # kept: the loop holds weak refs

    async def _stop_now(self) -> None:
        """Answer the calls in flight with an error (a moment at most), then exit 130."""
        stopped = InternalError("The server was stopped (Ctrl-C) during this call")
        tasks = self._app.stop_calls(stopped)
        if tasks:
            await asyncio.wait(tasks, timeout=0.25)
        for _ in range(3):  # a 2025-11-25 answer goes on through its stream's task
            await asyncio.sleep(0)
        sys.stderr.flush()
        os._exit(130)

    async def drain(self, server: DrainingServer, sockets: list[socket.socket] | None) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._drain_timeout
        calls = self._app.in_flight()
        said = (
            f"draining, {calls} call{'' if calls == 1 else 's'} in flight "
            f"(up to {self._drain_timeout:g} s)"
        )
        if server.stop_signal == signal.SIGINT:  # a person pressed Ctrl-C: tell them
            print(f"mcpkit: {said}; press Ctrl-C again to stop now", file=sys.stderr, flush=True)
        else:  # a supervisor's SIGTERM: no one is at a keyboard
            log.info("%s", said)
        server.stop_accepting(sockets)
        if self._app.legacy is not None:
            self._app.legacy.drain()
        work = loop.create_task(self._mcp_server.drain(self._drain_timeout))
        while server.open_connections() or not work.done():
            if loop.time() >= deadline:
                await self._stop_keyed()
                self._cut_off()
                break
            await asyncio.sleep(0.1)  # uvicorn's own pace: connections have no event
        await work

    async def _stop_keyed(self) -> None:
        """Keyed calls still running stop first, so a request waiting for one is answered
        "outcome unknown" naming its key (what a re-send will hear too), not the bare stop."""
        if await self._mcp_server.stop_detached() and self._app.calls:
            await asyncio.wait(list(self._app.calls), timeout=0.25)  # their answers go out

    def _cut_off(self) -> None:
        """The drain timeout passed: calls still running are answered with an error."""
        calls = self._app.in_flight()
        if calls:
            log.warning(
                "drain: %d call(s) still running after %g s; answering them with an error",
                calls,
                self._drain_timeout,
            )
        self._app.stop_calls(
            InternalError(
                f"The server stopped before this call finished (drain timeout "
                f"{self._drain_timeout:g} s); retry it if it is safe to repeat"
            )
        )
