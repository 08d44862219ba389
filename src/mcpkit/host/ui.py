"""What the host shows the user and asks them: the `HostUI` protocol."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from ..client.inputs import Elicitation
from .consent import Decision, PendingCall
from .conversation import ToolResult
from .supervision import StateChange

#: "session": allowed, and the same tool is allowed for the rest of the session.
Answer = bool | Literal["session"]


class HostUI(Protocol):
    def user(self, text: str) -> None: ...

    def assistant(self, text: str) -> None: ...

    def tool_call(self, call: PendingCall, decision: Decision) -> None:
        """Show the call, its arguments and what the policy decided (TOOL-02)."""
        ...

    async def confirm(self, call: PendingCall) -> Answer:
        """Ask the user to allow one call (GEN-03): yes, no, or yes for this session."""
        ...

    def tool_result(self, call: PendingCall, result: ToolResult) -> None: ...

    def progress(
        self, call: PendingCall, progress: float, total: float | None, message: str | None
    ) -> None: ...

    async def elicit(self, server: str, request: Elicitation) -> dict[str, Any]:
        """A server asks the user something (ELIC-03: say which server); returns an ElicitResult."""
        ...

    def server_state(self, change: StateChange) -> None:
        """A server went down, came back, or joined late (`supervision.LinkState`)."""
        ...

    def warn(self, text: str) -> None: ...

    def info(self, text: str) -> None: ...
