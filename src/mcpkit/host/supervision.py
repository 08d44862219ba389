"""The state of a server link, and what a failure says about it.

    connecting ──ok──▶ ready ◀──success── degraded
        ▲  │             │  └──slow or failing──▶ ┘
        │  └──failed──▶ down ◀──connection lost─── (ready or degraded)
        └──backoff───────┘

- `connecting`: starting the process or reaching the URL, then discovery and `tools/list`,
  within the server's `startTimeout` (apart from `timeout`, which bounds each request).
- `ready`: tools offered to the model.
- `degraded`: still connected and offered, but a request timed out or failed without the
  connection failing (HTTP 5xx, invalid answer); the next success makes it ready again.
- `down`: the stdio process exited or an HTTP connection failed; the link reconnects after
  a capped exponential backoff.
- `disabled`: `"disabled": true` in the config.
- `idle`: a lazy server not running (`"start": "lazy"`): its tools are offered from its
  record (`records.py`) and its first call starts it (`lazy.py`); `idleTimeout` returns it here.

A link that was up and went down keeps its tools known to the model while it restarts: a call
to one is answered by `Restarts.note` ("... is restarting (attempt 2); try again in 5 s"), not
with "no tool of that name".
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from ..client.errors import ClientError, ConnectionClosed, TransportError
from ..protocol.errors import MCPError


class LinkState(enum.Enum):
    CONNECTING = "connecting"
    READY = "ready"
    DEGRADED = "degraded"
    DOWN = "down"
    DISABLED = "disabled"
    IDLE = "idle"

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


@dataclass(slots=True)
class Restarts:
    """How a link comes back after a loss, for the model's answer meanwhile (no I/O)."""

    #: The connection attempt under way or next, counted since the link was last up (1: the
    #: first restart); 0 while it is up.
    attempt: int = 0
    #: Loop time of the next attempt (None: one is under way).
    next_at: float | None = None
    #: False when only the user can bring the link back (authorization failed).
    automatic: bool = True
    #: Seconds the last successful start took: what the next one is likely to take.
    took: float = 1.0

    def started(self, took: float) -> None:
        self.attempt, self.next_at, self.took = 0, None, took

    def trying(self) -> None:
        self.next_at, self.automatic = None, True
        self.attempt = max(self.attempt, 1)

    def failed(self, next_at: float | None) -> None:
        """Down (again): the next attempt at `next_at` (None: when the user asks)."""
        self.attempt += 1
        self.next_at, self.automatic = next_at, next_at is not None

    def note(self, server: str, now: float) -> str:
        """The model's answer to a call of this server's tools while it is down."""
        if not self.automatic:
            return (
                f"The {server!r} server is down until the user reconnects it; its tools "
                "cannot be called until then."
            )
        rest = max(0.0, self.next_at - now) if self.next_at is not None else 0.0
        seconds = max(1, math.ceil(rest + self.took))
        return (
            f"The {server!r} server is restarting (attempt {self.attempt}); "
            f"try again in {seconds} s."
        )
