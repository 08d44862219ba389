"""A 2025-11-25 session over stdio: the process is the session, so the channel only routes the
server's requests and notifications to the session while it lasts (TR-STDIO-07)."""

from __future__ import annotations

from typing import Protocol

from ..protocol.jsonrpc import JSONObject, RequestId, Response
from ..protocol.transport import NotificationHandler, NotificationSink, ServerRequestHandler

Routes = tuple[ServerRequestHandler | None, NotificationHandler | None]


class Process(Protocol):
    """What the channel uses of its `StdioTransport`."""

    async def request(self, request_id: RequestId, method: str, params: JSONObject) -> Response: ...

    async def notify(self, method: str, params: JSONObject | None = None) -> None: ...

    def route(
        self, on_request: ServerRequestHandler | None, on_notification: NotificationHandler | None
    ) -> Routes: ...


__all__ = ["StdioSessionChannel"]


class StdioSessionChannel:
    """A `SessionChannel` on a `StdioTransport`: server→client requests go to `on_request`,
    notifications to `on_notification`, until `detach()` gives the transport back."""

    session_id: str | None = None  # the process is the session: no id on the wire

    def __init__(
        self,
        transport: Process,
        on_request: ServerRequestHandler,
        on_notification: NotificationSink,
    ) -> None:
        self.transport = transport
        self._restore = transport.route(on_request, on_notification)

    async def request(self, request_id: RequestId, method: str, params: JSONObject) -> Response:
        return await self.transport.request(request_id, method, params)

    async def notify(self, method: str, params: JSONObject | None) -> None:
        await self.transport.notify(method, params)

    def session_ready(self, version: str) -> None:
        """Nothing to remember: stdio messages carry no version header."""

    async def open_stream(self) -> None:
        """The server writes to stdout whenever it likes: nothing to open."""

    async def end_session(self) -> None:
        """Closing the transport ends the process, and with it the session."""

    def detach(self) -> None:
        self.transport.route(*self._restore)
