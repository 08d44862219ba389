"""Serving `StreamableHTTPApp` with uvicorn (uvloop + httptools when installed), loopback by
default (TR-HTTP-04). Imported only when serving, so `mcpkit.transports.http` stays light."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from .http import StreamableHTTPApp
from .tuning import tune_gc

if TYPE_CHECKING:
    from ..server.server import Server

log = logging.getLogger("mcpkit.http")


def serve_http(
    server: Server,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    log_level: str = "warning",
    proxy_headers: bool = False,
    **options: Any,
) -> None:
    """Serve with uvicorn (uvloop + httptools when installed). Loopback by default (TR-HTTP-04)."""
    import uvicorn

    app = StreamableHTTPApp(server, path=path, **options)
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
        lifespan="on",
        loop=_loop_impl(),
        http=_http_impl(),
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


def _http_impl() -> str:
    try:
        import httptools  # noqa: F401
    except ImportError:
        return "h11"
    return "httptools"


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
