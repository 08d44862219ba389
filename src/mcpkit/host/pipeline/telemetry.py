"""Telemetry: one span per tool call (`host.telemetry`), with its server, tool, consent ruling
and outcome."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from ..telemetry import CallRecord
from .record import Call, Next, Outcome


class Spans(Protocol):
    """What the policy needs of `HostTelemetry` (or `telemetry.OFF`)."""

    def tool_call(self, name: str, call_id: str) -> AbstractContextManager[CallRecord]: ...

    def consent(self, server: str, tool: str, decision: str, by: str) -> None: ...


class Telemetry:
    def __init__(self, spans: Spans) -> None:
        self.spans = spans

    async def __call__(self, call: Call, next: Next) -> Outcome:
        with self.spans.tool_call(call.alias, call.call_id) as record:
            outcome = await next(call)
            if call.target is not None:
                link, tool = call.target.link, call.target.tool
                record.target(link.name, tool.name)
                if call.ruling is not None:
                    ruling = call.ruling
                    self.spans.consent(link.name, tool.name, ruling.decision.value, ruling.by)
            record.finished(outcome.kind)
            return outcome
