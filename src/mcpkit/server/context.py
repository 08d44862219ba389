"""`Context`: what a handler may ask for about the request it is serving."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol.errors import MissingRequiredClientCapability
from ..protocol.meta import LOG_LEVEL_RANK, RequestMeta

if TYPE_CHECKING:
    from .server import Server

#: Sends one notification (method, params) on the stream of the request being served.
Emit = Callable[[str, dict[str, Any]], Awaitable[None]]


class Context:
    """Per-request handle given to handlers that declare a parameter annotated `Context`.

    Cancellation reaches the handler as `asyncio.CancelledError` (client disconnect on HTTP,
    `notifications/cancelled` on stdio); let it propagate.
    """

    __slots__ = ("_emit", "_last_progress", "meta", "method", "request_id", "server")

    def __init__(
        self,
        server: Server,
        request_id: str | int,
        method: str,
        meta: RequestMeta,
        emit: Emit | None,
    ) -> None:
        self.server = server
        self.request_id = request_id
        self.method = method
        self.meta = meta
        self._emit = emit
        self._last_progress: float | None = None

    # -- what the client said about itself -------------------------------------------------
    @property
    def protocol_version(self) -> str:
        return self.meta.protocol_version

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.meta.client_capabilities

    @property
    def client_info(self) -> dict[str, Any] | None:
        return self.meta.client_info

    @property
    def request_meta(self) -> dict[str, Any]:
        return self.meta.raw

    def has_capability(self, name: str) -> bool:
        return self.meta.has_capability(name)

    def require_capability(self, *names: str) -> None:
        """Fail the request with -32021 unless it declared every named capability (BASE-49)."""
        missing: dict[str, Any] = {n: {} for n in names if not self.meta.has_capability(n)}
        if missing:
            raise MissingRequiredClientCapability(missing)

    # -- notifications on this request's stream ---------------------------------------------
    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send `notifications/progress` if the request carried a `progressToken`.

        Progress must increase (PROG-04): a value not above the last one sent is dropped.
        """
        token = self.meta.progress_token
        if token is None or self._emit is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            return
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._emit("notifications/progress", params)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send `notifications/message` only when the request asked for logs at this level."""
        wanted = self.meta.log_level
        if wanted is None or self._emit is None:
            return
        rank = LOG_LEVEL_RANK.get(level)
        if rank is None:
            raise ValueError(f"unknown log level {level!r}")
        if rank < LOG_LEVEL_RANK[wanted]:
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._emit("notifications/message", params)

    async def debug(self, data: Any, logger: str | None = None) -> None:
        await self.log("debug", data, logger)

    async def info(self, data: Any, logger: str | None = None) -> None:
        await self.log("info", data, logger)

    async def warning(self, data: Any, logger: str | None = None) -> None:
        await self.log("warning", data, logger)

    async def error(self, data: Any, logger: str | None = None) -> None:
        await self.log("error", data, logger)
