"""The audit trail: one record per call that reached a decision (`host.audit`), written to the
log when one is configured and published as `AuditRecorded` either way."""

from __future__ import annotations

from ...protocol.errors import MCPError
from ..audit import AuditLog, CallAudit, start_audit
from ..events import AuditRecorded, EventBus
from ..retry import OutcomeUnknown
from .present import first_line, tool_result
from .record import Call, Next, Outcome


class Audit:
    """`rounds`: exceptions that end a round of the call, not the call (the gateway's rounds
    of input): recorded when the call ends, in a later round."""

    def __init__(
        self,
        log: AuditLog | None,
        bus: EventBus,
        rounds: tuple[type[BaseException], ...] = (),
    ) -> None:
        self.log = log
        self.bus = bus
        self.rounds = rounds

    async def __call__(self, call: Call, next: Next) -> Outcome:
        link, tool = call.resolved.link, call.resolved.tool
        who = call.agent if call.caller == "model" else call.caller
        audit = start_audit(
            self.log, who, link.name, tool.name, call.call_id, call.arguments, call.principal
        )
        try:
            outcome = await next(call)
        except self.rounds:
            raise
        except BaseException as exc:
            self._decided(call, audit)
            text = exc.message if isinstance(exc, MCPError) else type(exc).__name__
            audit.finished(_kind(exc), text)
            self.bus.publish(AuditRecorded(audit.record, self.log is not None))
            raise
        self._decided(call, audit)
        error = None
        if outcome.kind != "denied" and (outcome.raw is None or outcome.raw.is_error):
            error = outcome.error or first_line(tool_result(call.call_id, outcome))
        elif outcome.kind == "denied" and call.ruling is None:
            error = outcome.error  # refused before any ruling: say why
        audit.finished(outcome.kind, error, key=outcome.key, attempts=outcome.attempts)
        self.bus.publish(AuditRecorded(audit.record, self.log is not None))
        return outcome

    @staticmethod
    def _decided(call: Call, audit: CallAudit) -> None:
        if call.ruling is not None:
            audit.decided(call.ruling.decision.value, call.ruling.by)


def _kind(exc: BaseException) -> str:
    """The outcome of a call that ended in an exception (a front end shapes it afterwards)."""
    if isinstance(exc, OutcomeUnknown):
        return "unknown"
    return "timeout" if isinstance(exc, TimeoutError) else "error"
