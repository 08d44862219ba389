"""The 2025-11-25 session of a stdio process (CHECKLIST B.1.1: `initialize` selects legacy
semantics for that process). Requests run on a `LegacySession`; server→client requests,
notifications and responses are lines on stdout like everything else. Requests that carry
modern `_meta` keep being served statelessly by `StdioConnection` (VER-15).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..protocol.errors import MCPError
from ..protocol.jsonrpc import Message, Notification, Request, Response, encode_error, encode_result
from ..protocol.versions import META_PROTOCOL_VERSION
from ..server.legacy.session import LegacySession

if TYPE_CHECKING:
    import asyncio

    from ..server.server import Server


class StdioOutbox:
    """Every message is one line on stdout; a stdio session has no connection to release."""

    __slots__ = ("write",)

    def __init__(self, write: Callable[[bytes], None]) -> None:
        self.write = write

    def send(self, data: bytes) -> None:
        self.write(data)

    def finish(self, data: bytes | None) -> None:
        if data is not None:
            self.write(data)

    def release(self) -> None:
        return None


def is_modern(msg: Request) -> bool:
    meta = msg.params.get("_meta") if msg.params is not None else None
    return isinstance(meta, dict) and META_PROTOCOL_VERSION in meta


class StdioLegacy:
    """Holds the process's session once `initialize` succeeded."""

    def __init__(self, server: Server, write: Callable[[bytes], None]) -> None:
        self.server = server
        self.outbox = StdioOutbox(write)
        self.session: LegacySession | None = None

    def claims(self, msg: Message) -> bool:
        """Whether the message belongs to the session era (and is handled here)."""
        if type(msg) is Request:
            if self.session is None and msg.method != "initialize":
                return False  # the modern hot path: one comparison
            return not is_modern(msg)
        if type(msg) is Response:
            return self.session is not None
        return False

    def receive(self, msg: Message) -> None:
        session = self.session
        if type(msg) is Request:
            if session is None:
                self._initialize(msg)
            else:
                session.start(msg, self.outbox)
        elif type(msg) is Response and session is not None:
            session.receive_response(msg)

    def notify(self, msg: Notification) -> None:
        """Client notifications (initialized, cancelled, ...) once a session exists."""
        if self.session is not None:
            self.session.receive_notification(msg)

    def _initialize(self, msg: Request) -> None:
        core = LegacySession(self.server, "stdio")
        try:
            result = core.initialize(msg.params)
        except MCPError as exc:  # rejected: no session (the client may try again)
            self.outbox.write(encode_error(msg.id, exc))
            return
        self.session = core
        core.notify_outbox = self.outbox
        self.server.subscriptions.add_listener(core.deliver)
        self.outbox.write(encode_result(msg.id, result))

    def tasks(self) -> list[asyncio.Task[None]]:
        return list(self.session.tasks.values()) if self.session is not None else []

    def close(self) -> None:
        if self.session is not None:
            self.server.subscriptions.remove_listener(self.session.deliver)
            self.session.close()
