"""What a client transport declares it can do, as data (no I/O).

It lives below both the client and the server because the in-process transport is built by
the server (`Server.memory_transport`) and the client never imports the server: each side
names the same record. The contract itself is `mcpkit.client.transport.Transport`.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from .jsonrpc import JSONObject, Notification, RequestId, Response

__all__ = [
    "NotificationHandler",
    "NotificationSink",
    "OpenSession",
    "OpenStream",
    "ServerRequestHandler",
    "SessionChannel",
    "ToolFilter",
    "TransportCapabilities",
    "also",
]

OpenStream = Callable[[RequestId, str, JSONObject], AsyncGenerator[JSONObject, None]]
"""Sends a long-lived request (`subscriptions/listen`) and yields every message of its
stream, the final response last; leaving the iteration ends the request on the wire."""

ToolFilter = Callable[[list[JSONObject]], list[JSONObject]]
"""Sees a `tools/list` page and returns the tools the transport can call (TR-XMH-07)."""

ServerRequestHandler = Callable[[str, JSONObject], Awaitable[JSONObject]]
"""Answers one server→client request (method, params); raises `MCPError` to refuse."""

NotificationSink = Callable[[Notification], Awaitable[None]]

NotificationHandler = Callable[[Notification], Awaitable[None] | None]
"""Receives server notifications (progress, log messages, ...); may be sync or async."""


class SessionChannel(Protocol):
    """One 2025-11-25 session over a transport: what `LegacyClientSession` sends through."""

    @property
    def session_id(self) -> str | None:
        """`Mcp-Session-Id` once the server gave one (HTTP); None on stdio."""
        ...

    async def request(self, request_id: RequestId, method: str, params: JSONObject) -> Response:
        """One request of the session, its final response back (as `Transport.request`)."""
        ...

    async def notify(self, method: str, params: JSONObject | None) -> None: ...

    def session_ready(self, version: str) -> None:
        """`initialize` was answered with `version`; later requests carry it."""
        ...

    async def open_stream(self) -> None:
        """Open the server's channel for unsolicited messages (HTTP's GET stream), if any."""
        ...

    async def end_session(self) -> None:
        """End the session on the wire (HTTP's DELETE); the transport stays open."""
        ...

    def detach(self) -> None:
        """`initialize` showed a modern server after all: leave the transport as it was."""
        ...


OpenSession = Callable[[ServerRequestHandler, NotificationSink], SessionChannel]
"""Starts a 2025-11-25 session on the transport: server→client requests go to the handler,
notifications to the sink."""


@dataclass(frozen=True, slots=True)
class TransportCapabilities:
    """What a transport declares beyond `request`; everything is off by default, so a minimal
    transport declares `TransportCapabilities()` and is still a working transport."""

    #: Names the kind of wire in logs and telemetry: "http", "stdio", "memory", or your own.
    kind: str = "custom"
    #: Where the detected era is remembered (VER-11): an endpoint URL or a command line;
    #: None: probed on every connect.
    era_key: str | None = None
    #: The HTTP endpoint, when there is one (telemetry's `server.address` and `server.port`).
    url: str | None = None
    #: Server notifications (progress, logs, list changes) reach the client: it calls this once,
    #: before `start`, with its handler, which the transport calls besides any it was built
    #: with. None: the transport delivers none, so progress callbacks are refused.
    notifications: Callable[[NotificationHandler], None] | None = None
    #: Listen streams (`Client.subscribe`); None: subscribing fails with a one-line error.
    stream: OpenStream | None = None
    #: A listen stream that breaks may be opened again with a new request (SUB-13).
    reopens_streams: bool = False
    #: Names the credentials in use, so that private cache entries are kept apart (CACHE-11).
    credentials_key: Callable[[], str] | None = None
    #: Drops tools it cannot call from `tools/list` (HTTP's `x-mcp-header`, TR-XMH-07).
    accept_tools: ToolFilter | None = None
    #: 2025-11-25 sessions (`initialize`, server→client requests); None: modern servers only.
    open_session: OpenSession | None = None


def also(first: NotificationHandler | None, then: NotificationHandler) -> NotificationHandler:
    """A handler calling `first` (when there is one), then `then` even if `first` failed: how
    a transport adds the client's handler to the one it was built with (`notifications`)."""
    if first is None or first is then:
        return then

    async def both(message: Notification) -> None:
        try:
            outcome = first(message)
            if inspect.isawaitable(outcome):
                await outcome
        finally:
            outcome = then(message)
            if inspect.isawaitable(outcome):
                await outcome

    return both
