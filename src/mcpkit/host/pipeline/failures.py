"""Failures to outcomes: what the inner policies raise becomes one clear line for the caller
and an outcome for the audit trail (`timeout`, `unknown`, `error`)."""

from __future__ import annotations

from ...client import ClientError
from ...client.errors import ConnectFailed
from ...protocol.errors import MCPError
from ..deadlines import DeadlineExceeded
from ..retry import OutcomeUnknown
from ..supervision import connection_lost
from .record import Call, Next, Outcome


class Failures:
    async def __call__(self, call: Call, next: Next) -> Outcome:
        try:
            return await next(call)
        except OutcomeUnknown as exc:
            timed_out = isinstance(exc.cause, DeadlineExceeded)
            kind = "timeout" if timed_out else "unknown"
            return Outcome(kind, None, str(exc), call.key, call.attempt)
        except MCPError as exc:
            text = f"The server rejected the call: {exc.message}"
            return Outcome("error", None, text, call.key, call.attempt)
        except (ClientError, DeadlineExceeded) as exc:
            return failure(call, exc)


def failure(call: Call, exc: ClientError | DeadlineExceeded) -> Outcome:
    """A call that failed for good; `call.unsure`: an attempt may have run."""
    unsure = call.unsure and not _read_only(call)
    text = _failed(call, exc, unsure)
    if unsure:
        key = f" (its idempotency key is {call.key})" if call.key else ""
        text += f" It may or may not have taken effect{key}: check before calling it again."
    kind = "timeout" if isinstance(exc, DeadlineExceeded) else "error"
    return Outcome(kind, None, text, call.key, call.attempt)


def _failed(call: Call, exc: BaseException, unsure: bool) -> str:
    name = call.resolved.link.name
    where = f"{name} > {call.resolved.tool.name}"
    tries = f" ({call.attempt} attempts)" if call.attempt > 1 else ""
    if isinstance(exc, DeadlineExceeded):
        return (
            f"The call to {where} got no answer within its deadline "
            f"({exc.deadline.describe()}) and was cancelled{tries}."
        )
    if isinstance(exc, ConnectFailed) and unsure:  # a retry that could not be sent
        return (
            f"The connection to the {name!r} server failed during the call, and the "
            f"server could not be reached to repeat it{tries}; the host is reconnecting."
        )
    if isinstance(exc, ConnectFailed):
        return (
            f"The {name!r} server could not be reached{tries}, so the call did not run; "
            "the host is reconnecting."
        )
    if connection_lost(exc):  # its text may quote the server's stderr: not for the model
        return (
            f"The connection to the {name!r} server failed during the call{tries}; "
            "the host is reconnecting."
        )
    return f"The server could not complete the call{tries}: {exc}"


def _read_only(call: Call) -> bool:
    """Only a trusted server's annotations are believed (TOOL-12)."""
    target = call.resolved
    return target.link.config.trusted and target.tool.annotations.get("readOnlyHint") is True
