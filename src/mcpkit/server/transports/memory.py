"""In-process transport: a client talks to a `Server` in the same event loop, through the same
bytes-level path stdio uses (encode → the server's front door → dispatch → encode). For
tests, notebooks and embedding.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any

from ...protocol import jsonrpc
from ...protocol.errors import UnsupportedProtocolVersion
from ...protocol.jsonrpc import JSONObject, Notification, RequestId, Response
from ...protocol.transport import NotificationHandler, TransportCapabilities, also
from ..admission import Refused, ServerRequest
from ..session_core import listen_frames

if TYPE_CHECKING:
    from ..context import Emit
    from ..server import Server

#: Sees every message the server produced: (request method, decoded message).
Trace = Callable[[str, dict[str, Any]], None]


class MemoryTransport:
    """Client-side transport bound to an in-process server (see `mcpkit.client.transport`):
    notifications and listen streams; no 2025-11-25 sessions (there is nothing to initialize
    in process), and its era is never cached (each server object may differ)."""

    def __init__(
        self,
        server: Server,
        on_notification: NotificationHandler | None = None,
        *,
        trace: Trace | None = None,
    ) -> None:
        self.server = server
        self.on_notification = on_notification
        self.trace = trace
        self.capabilities = TransportCapabilities(
            kind="memory", notifications=self.add_notification_handler, stream=self.stream
        )

    async def start(self) -> None:
        return None

    def _admit(
        self, request_id: RequestId, method: str, params: JSONObject, emit: Emit | None = None
    ) -> ServerRequest:
        """Through the server's front door, like a line on stdio (raises `Refused`)."""
        admitted = self.server.admit(jsonrpc.encode_request(request_id, method, params), emit=emit)
        if type(admitted) is not ServerRequest:  # `initialize`: no sessions in memory (VER-12)
            raise Refused(
                UnsupportedProtocolVersion(
                    params.get("protocolVersion"), list(self.server.advertised_versions)
                ),
                request_id,
            )
        return admitted

    async def request(self, request_id: RequestId, method: str, params: JSONObject) -> Response:
        async def emit(note_method: str, note_params: dict[str, Any]) -> None:
            data = jsonrpc.loads(jsonrpc.encode_notification(note_method, note_params))
            if self.trace is not None:
                self.trace(method, data)
            if self.on_notification is not None:
                out = self.on_notification(Notification(note_method, data.get("params")))
                if asyncio.iscoroutine(out):
                    await out

        try:
            wire = await self.server.answer(self._admit(request_id, method, params, emit))
        except Refused as refused:
            wire = jsonrpc.encode_error(refused.request_id, refused.error)
        data = jsonrpc.loads(wire)
        if self.trace is not None:
            self.trace(method, data)
        return Response(data.get("id"), data.get("result"), data.get("error"))

    async def stream(
        self, request_id: RequestId, method: str, params: JSONObject
    ) -> AsyncGenerator[JSONObject, None]:
        """A listen stream on the in-process server: acknowledgement, notifications, final result."""
        from ...protocol.errors import MCPError

        try:
            sub = await self.server.open_subscription(self._admit(request_id, method, params))
        except Refused as refused:
            yield {"jsonrpc": "2.0", "id": request_id, "error": refused.error.to_wire()}
            return
        except MCPError as exc:
            yield {"jsonrpc": "2.0", "id": request_id, "error": exc.to_wire()}
            return
        frames = listen_frames(sub, request_id, None)  # no keep-alive ticks in memory
        try:
            async for frame in frames:
                if frame is not None:
                    yield frame
        finally:
            await frames.aclose()
            self.server.subscriptions.close(sub)

    def accept_tools(self, tools: list[JSONObject]) -> list[JSONObject]:
        return tools

    def add_notification_handler(self, handler: NotificationHandler) -> None:
        """Server notifications go to `handler` too (`capabilities.notifications`)."""
        self.on_notification = also(self.on_notification, handler)

    async def close(self) -> None:
        return None
