"""Serving `StreamableHTTPApp` with uvicorn (uvloop + httptools when installed), loopback by
default (TR-HTTP-04). Imported only when serving, so `mcpkit.server.transports.http` stays light."""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

from .http import StreamableHTTPApp
from .tuning import tune_gc

if TYPE_CHECKING:
    from ..server import Server

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
    max_connections: int | None = 1000,
    **options: Any,
) -> None:
    """Serve with uvicorn (uvloop + httptools when installed). Loopback by default (TR-HTTP-04).
    Arguments left out come from `MCPKIT_*` settings (host, port, log level, body and session
    limits), then the defaults.

    Limits (nginx's defaults; see README "Limits (HTTP)"): the request head within
    `header_timeout` seconds (408), header lines up to `max_header_line` bytes, the head up to
    `max_header_bytes` and `max_headers` fields (431), a body part within `body_timeout` of the
    one before (408), `max_connections` open connections (503 + Retry-After), idle keep-alive
    connections closed after `keep_alive_timeout`. The app's own options (`max_body_size` →
    413, ...) pass through."""
    import uvicorn

    from ..settings import Settings

    settings = Settings.from_env()
    settings.configure_logging()
    settings.scope_requests(server)
    host, port = settings.pick("host", host), settings.pick("port", port)
    log_level = log_level or settings.log_level or "warning"
    if settings.max_body_bytes is not None:
        options.setdefault("max_body_size", settings.max_body_bytes)
    if settings.max_sessions is not None and server.legacy:
        options.setdefault("max_sessions", settings.max_sessions)
    http: Any = "h11"  # without httptools: uvicorn's h11, its head size limited only
    with contextlib.suppress(ImportError):
        from .http_limits import HttpLimits, limited_protocol

        http = limited_protocol(
            HttpLimits(
                header_timeout=header_timeout,
                body_timeout=body_timeout,
                max_header_line=max_header_line,
                max_header_bytes=max_header_bytes,
                max_headers=max_headers,
                max_connections=max_connections,
            )
        )
    # The protocol times bodies out; the app does only where it cannot (h11).
    app = StreamableHTTPApp(
        server, path=path, body_timeout=body_timeout if http == "h11" else None, **options
    )
    if host not in ("127.0.0.1", "localhost", "::1") and "allowed_hosts" not in options:
        log.warning(
            "serving on %s but only loopback Host headers are allowed; pass allowed_hosts", host
        )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        # JSON logs: uvicorn's records go through the root logger's JSON handler too.
        log_config=None if settings.log_format == "json" else uvicorn.config.LOGGING_CONFIG,
        lifespan="on",
        loop=_loop_impl(),
        http=http,
        timeout_keep_alive=keep_alive_timeout,
        h11_max_incomplete_event_size=max_header_bytes,
        timeout_graceful_shutdown=5,
        # Loopback by default: X-Forwarded-* are not trusted unless the caller asks for it.
        proxy_headers=proxy_headers,
    )
    _UvicornServer(config, server, app).run()


def _loop_impl() -> str:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def _uvicorn_server_cls() -> type:
    import uvicorn

    return uvicorn.Server


class _UvicornServer(_uvicorn_server_cls()):  # type: ignore[misc]
    """Ends listen streams gracefully (SUB-11) before uvicorn waits for open connections."""

    def __init__(self, config: Any, mcp_server: Server, app: StreamableHTTPApp) -> None:
        super().__init__(config)
        self._mcp_server = mcp_server
        self._app = app

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        tune_gc()

    async def shutdown(self, sockets: Any = None) -> None:
        self._mcp_server.subscriptions.close_all()
        if self._app.legacy is not None:
            self._app.legacy.close()  # ends GET streams and in-flight session requests
        await super().shutdown(sockets)
