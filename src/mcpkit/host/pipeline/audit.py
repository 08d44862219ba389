"""The audit trail: one record per call that reached a decision (`host.audit`), written to the
log when one is configured and published as `AuditRecorded` either way."""

from __future__ import annotations

from ..audit import AuditLog, start_audit
from .events import AuditRecorded, EventBus
from .present import first_line, tool_result
from .record import Call, Next, Outcome


class Audit:
    def __init__(self, log: AuditLog | None, bus: EventBus) -> None:
        self.log = log
        self.bus = bus

    async def __call__(self, call: Call, next: Next) -> Outcome:
        link, tool = call.resolved.link, call.resolved.tool
        who = call.agent if call.caller == "model" else call.caller
        audit = start_audit(
            self.log, who, link.name, tool.name, call.call_id, call.arguments, call.principal
        )
        try:
            outcome = await next(call)
        except BaseException as exc:
            audit.finished("error", type(exc).__name__)
            raise
        if call.ruling is not None:
            audit.decided(call.ruling.decision.value, call.ruling.by)
        error = None
        if outcome.kind != "denied" and (outcome.raw is None or outcome.raw.is_error):
            error = outcome.error or first_line(tool_result(call.call_id, outcome))
        audit.finished(outcome.kind, error, key=outcome.key, attempts=outcome.attempts)
        self.bus.publish(AuditRecorded(audit.record, self.log is not None))
        return outcome
