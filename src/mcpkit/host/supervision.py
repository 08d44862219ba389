"""The state of a server link, and what a failure says about it.

    connecting ──ok──▶ ready ◀──success── degraded
        ▲  │             │  └──slow or failing──▶ ┘
        │  └──failed──▶ down ◀──connection lost─── (ready or degraded)
        └──backoff───────┘

- `connecting`: starting the process or reaching the URL, then discovery and `tools/list`.
- `ready`: tools offered to the model.
- `degraded`: still connected and offered, but a request timed out or failed without the
  connection failing (HTTP 5xx, invalid answer); the next success makes it ready again.
- `down`: the stdio process exited or an HTTP connection failed; its tools are withdrawn and
  the link reconnects after a capped exponential backoff.
- `disabled`: `"disabled": true` in the config.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..client.errors import ClientError, ConnectionClosed, TransportError
from ..protocol.errors import MCPError


class LinkState(enum.Enum):
    CONNECTING = "connecting"
    READY = "ready"
    DEGRADED = "degraded"
    DOWN = "down"
    DISABLED = "disabled"

    @property
    def up(self) -> bool:
        """Connected: its tools are offered."""
        return self in (LinkState.READY, LinkState.DEGRADED)


@dataclass(frozen=True, slots=True)
class StateChange:
    """What `HostUI.server_state` is told."""

    server: str
    state: LinkState
    #: Why (down, degraded) or what (ready: the tool count).
    detail: str | None = None
    #: Down: seconds until the next connection attempt.
    retry_in: float | None = None

    def describe(self) -> str:
        text = f"server {self.server!r}: {self.state.value}"
        if self.detail:
            text += f" ({self.detail})"
        if self.retry_in is not None:
            text += f"; reconnecting in {self.retry_in:.2g} s"
        return text


def connection_lost(exc: BaseException) -> bool:
    """True when the failure means the connection itself is gone: the stdio process exited,
    or an HTTP request failed below HTTP (refused, reset). An HTTP status, a timeout or an
    invalid answer leave the link connected (degraded)."""
    if isinstance(exc, ConnectionClosed):
        return True
    return isinstance(exc, TransportError) and exc.status is None


def describe(exc: BaseException) -> str:
    """One line for the user (never shown to the model: it may quote the server's stderr)."""
    if isinstance(exc, MCPError):
        return f"error {exc.code}: {exc.message}"
    if isinstance(exc, TimeoutError) and not isinstance(exc, ClientError):
        return "no answer in time"
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
