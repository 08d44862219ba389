"""What happens in the host, as typed events published once on a small bus: calls (the call
pipeline's policies publish them on their front end's bus) and servers going down, coming
back or joining late (`StateChange`, published by the `Fleet` on its bus).

The terminal and the web UI subscribe (`to_ui`), and so may anything else; publishers never
know who listens. A listener is a plain function; one that raises is logged and the host goes
on. (Every state change is logged by its link as well, including the connection attempts the
fleet does not publish.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from .audit import AuditRecord
from .consent import Decision, PendingCall
from .conversation import ToolResult
from .supervision import StateChange
from .ui import HostUI

log = logging.getLogger("mcpkit.host.events")


@dataclass(frozen=True, slots=True)
class CallEvent:
    """What every event about one tool call carries: the call, as the user is shown it."""

    call: PendingCall


@dataclass(frozen=True, slots=True)
class CallDecided(CallEvent):
    """The policy's decision, before the call runs or the user is asked (TOOL-02)."""

    decision: Decision


@dataclass(frozen=True, slots=True)
class CallAllowed(CallEvent):
    """The call goes ahead: the rules allowed it, or the user did (`by`)."""

    by: str


@dataclass(frozen=True, slots=True)
class CallRefused(CallEvent):
    """The host refused the call before consent could matter (host-owned fields, the hook)."""

    reason: str


@dataclass(frozen=True, slots=True)
class CallSent(CallEvent):
    """The call's `tools/call` request went to the server with this JSON-RPC id (each
    attempt's first request; an MCP App is shown it as `toolInfo.id`)."""

    request_id: int


@dataclass(frozen=True, slots=True)
class CallProgress(CallEvent):
    """The server's progress on the call (`notifications/progress`)."""

    done: float
    total: float | None
    message: str | None


@dataclass(frozen=True, slots=True)
class CallFinished(CallEvent):
    """The result the caller gets (a consent denial included)."""

    result: ToolResult


@dataclass(frozen=True, slots=True)
class ContentScreened(CallEvent):
    """Hidden characters were removed from the call's result (`host.screening`): where and
    what, one phrase."""

    removed: str


@dataclass(frozen=True, slots=True)
class CallBackgrounded(CallEvent):
    """The call runs on in the background as the server's task `task_id`: its caller got a
    handle, and the result comes when the task ends (`host.background`)."""

    task_id: str


@dataclass(frozen=True, slots=True)
class BackgroundEnded(CallEvent):
    """A background call's task ended (`status`: completed, failed or cancelled); the result
    waits for the model's next round."""

    task_id: str
    status: str
    result: ToolResult


@dataclass(frozen=True, slots=True)
class AuditRecorded:
    """One audit line, as written (also when no audit file is configured: `written` False)."""

    record: AuditRecord
    written: bool


Event = (
    CallDecided
    | CallAllowed
    | CallRefused
    | CallSent
    | CallProgress
    | CallFinished
    | ContentScreened
    | CallBackgrounded
    | BackgroundEnded
    | AuditRecorded
    | StateChange
)
Listener = Callable[[Event], None]


class EventBus:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Hear every event from now on; returns the way to stop."""
        self._listeners.append(listener)

        def stop() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return stop

    def publish(self, event: Event) -> None:
        for listener in tuple(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("an event listener failed on %s", type(event).__name__)


def to_ui(ui: HostUI) -> Listener:
    """A listener showing events on a `HostUI` (the terminal's, the web UI's)."""

    def show(event: Event) -> None:
        if isinstance(event, CallDecided):
            ui.tool_call(event.call, event.decision)
        elif isinstance(event, CallRefused):
            ui.warn(f"refused {event.call.alias}: {event.reason}")
        elif isinstance(event, ContentScreened):
            ui.warn(
                f"{event.call.alias}: hidden characters removed from its result: {event.removed}"
            )
        elif isinstance(event, CallProgress):
            ui.progress(event.call, event.done, event.total, event.message)
        elif isinstance(event, CallFinished):
            ui.tool_result(event.call, event.result)
        elif isinstance(event, StateChange):
            ui.server_state(event)
        elif isinstance(event, CallBackgrounded):
            ui.info(f"{event.call.alias} runs in the background as task {event.task_id}")
        elif isinstance(event, BackgroundEnded):
            ui.info(f"background task {event.task_id} ({event.call.alias}) {event.status}")

    return show
