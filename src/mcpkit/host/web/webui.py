"""`WebUI`: the host's `HostUI` for the browser. What the host shows becomes an event for the
page; what it asks (consent, a server's form or link) becomes a question the page answers.
Nothing here decides anything: the policy, pins, supervision and audit stay the host's (the
call pipeline's events reach it through `pipeline.to_ui`)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from ...client.inputs import Elicitation
from ..conversation import ToolResult
from ..pipeline import Decision, PendingCall
from ..supervision import StateChange
from ..ui import Answer
from .events import EventHub, Questions


class WebUI:
    def __init__(self, hub: EventHub, questions: Questions) -> None:
        self.hub = hub
        self.questions = questions
        #: Called after anything that may change the servers or pins panels.
        self.on_status: Callable[[], None] | None = None
        #: Each running call's start (perf_counter) and server, and the seconds it has spent
        #: waiting for the person (consent, a form the server asked for): not its duration.
        self._started: dict[str, tuple[float, str]] = {}
        self._waited: dict[str, float] = {}
        #: Calls whose card hosts an app: their results carry the whole CallToolResult.
        self.app_calls: set[str] = set()

    def user(self, text: str) -> None:
        self.hub.publish("user", text=text)

    def assistant(self, text: str) -> None:
        self.hub.publish("assistant", text=text)

    def tool_call(self, call: PendingCall, decision: Decision) -> None:
        self._started[call.call_id] = (time.perf_counter(), call.server)
        self.hub.publish("call", _fields(call), id=call.call_id, decision=decision.value)

    async def confirm(self, call: PendingCall) -> Answer:
        with self._waiting([call.call_id]):
            answer = await self.questions.ask(
                "consent", call=call.call_id, annotations=call.annotations, **_fields(call)
            )
        allowed: Answer = "session" if answer == "session" else answer == "once"
        self.hub.publish("consent", id=call.call_id, answer="deny" if not allowed else answer)
        return allowed

    def tool_result(self, call: PendingCall, result: ToolResult) -> None:
        started = self._started.pop(call.call_id, None)
        waited = self._waited.pop(call.call_id, 0.0)
        took = (
            round((time.perf_counter() - started[0] - waited) * 1000, 1)
            if started is not None
            else None
        )
        extra = {"raw": result.raw} if call.call_id in self.app_calls else {}
        structured = (result.raw or {}).get("structuredContent")
        if structured is not None:  # shown as a tree in the card (never sent to the model)
            extra["structured"] = structured
        self.app_calls.discard(call.call_id)
        self.hub.publish(
            "result",
            extra,
            id=call.call_id,
            content=result.content,
            is_error=result.is_error,
            duration_ms=took,
            waited_ms=round(waited * 1000, 1),
        )

    def progress(
        self, call: PendingCall, progress: float, total: float | None, message: str | None
    ) -> None:
        self.hub.publish(
            "progress",
            replay=False,
            id=call.call_id,
            progress=progress,
            total=total,
            message=message,
        )

    async def elicit(self, server: str, request: Elicitation) -> dict[str, Any]:
        # The client does not say which call asked: each running call of the server waits.
        running = [cid for cid, (_, srv) in self._started.items() if srv == server]
        with self._waiting(running):
            return await self._elicit(server, request)

    @contextlib.contextmanager
    def _waiting(self, calls: list[str]) -> Iterator[None]:
        """The person is being asked: the time counts as waiting for `calls`, not running."""
        began = time.perf_counter()
        try:
            yield
        finally:
            spent = time.perf_counter() - began
            for call_id in calls:
                if call_id in self._started:
                    self._waited[call_id] = self._waited.get(call_id, 0.0) + spent

    async def _elicit(self, server: str, request: Elicitation) -> dict[str, Any]:
        if request.mode == "url":
            # ELIC-06/28/29: the full URL and its domain, opened only when the user says so.
            url = request.url or ""
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                self.warn(f"{server} sent a link that is not an http(s) URL; declined")
                return {"action": "decline"}
            answer = await self.questions.ask(
                "elicit",
                server=server,
                mode="url",
                message=request.message,
                url=url,
                domain=parts.hostname,
                punycode="xn--" in parts.hostname,
            )
            return {"action": answer} if answer in ("accept", "decline", "cancel") else _cancel()
        answer = await self.questions.ask(
            "elicit",
            server=server,
            mode="form",
            message=request.message,
            schema=request.requested_schema or {"type": "object", "properties": {}},
        )
        return answer if isinstance(answer, dict) else _cancel()

    def server_state(self, change: StateChange) -> None:
        self.hub.publish(
            "server",
            server=change.server,
            state=change.state.value,
            detail=change.detail,
            text=change.describe(),
        )
        self._status()

    def warn(self, text: str) -> None:
        self.hub.publish("note", level="warning", text=text)
        self._status()

    def info(self, text: str) -> None:
        self.hub.publish("note", level="info", text=text)

    def _status(self) -> None:
        if self.on_status is not None:
            self.on_status()


def _fields(call: PendingCall) -> dict[str, Any]:
    """What the page shows of a call."""
    return {
        "alias": call.alias,
        "server": call.server,
        "tool": call.tool,
        "arguments": call.arguments,
        "trusted": call.trusted,
    }


def _cancel() -> dict[str, Any]:
    return {"action": "cancel"}
