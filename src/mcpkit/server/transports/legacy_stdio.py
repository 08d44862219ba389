"""The 2025-11-25 session of a stdio process (CHECKLIST B.1.1: `initialize` selects legacy
semantics for that process). The front door routes each line (`mcpkit.server.admission`);
session requests run on a `LegacySession`, and server→client requests, notifications and
responses are lines on stdout like everything else. Requests that carry modern `_meta` keep
being served statelessly by `StdioConnection` (VER-15).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ...protocol.errors import MCPError
from ...protocol.jsonrpc import encode_error, encode_result
from ..legacy.session import LegacySession

if TYPE_CHECKING:
    import asyncio

    from ..admission import OpenSession
    from ..server import Server


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


class StdioLegacy:
    """Holds the process's session once `initialize` succeeded."""

    def __init__(self, server: Server, write: Callable[[bytes], None]) -> None:
        self.server = server
        self.outbox = StdioOutbox(write)
        self.session: LegacySession | None = None

    def open(self, admitted: OpenSession) -> None:
        """An admitted `initialize`: the process's session, or an error and no session (the
        client may try again)."""
        core = LegacySession(self.server, "stdio")
        try:
            result = core.initialize(admitted.params)
        except MCPError as exc:
            self.outbox.write(encode_error(admitted.id, exc))
            return
        self.session = core
        core.notify_outbox = self.outbox
        self.server.subscriptions.add_listener(core.deliver)
        self.outbox.write(encode_result(admitted.id, result))

    def tasks(self) -> list[asyncio.Task[None]]:
        return list(self.session.tasks.values()) if self.session is not None else []

    def close(self) -> None:
        if self.session is not None:
            self.server.subscriptions.remove_listener(self.session.deliver)
            self.session.close()
