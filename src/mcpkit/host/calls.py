"""One allowed tool call on its server: host-owned values filled in, run under the tool's
deadline, and every failure turned into a clear line for the model and an outcome for the
audit trail. The server link hears how it went (a lost connection takes it down)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..client import CallResult, ClientError
from ..protocol.errors import MCPError
from .connections import Target
from .consent import PendingCall
from .deadlines import Clock, DeadlineExceeded, within
from .hooks import CallExtras
from .supervision import connection_lost
from .ui import HostUI


@dataclass(frozen=True, slots=True)
class Outcome:
    """`raw` when the server answered; otherwise `error`, the message for the model.
    `kind` is `ok`, `tool-error`, `error` or `timeout` (as the audit log records it)."""

    kind: str
    raw: CallResult | None = None
    error: str | None = None


def arguments_for(target: Target, arguments: dict[str, Any]) -> dict[str, Any]:
    """The model's arguments plus the host-owned values the tool accepts."""
    sent = dict(arguments)
    accepts = (target.tool.input_schema.get("properties") or {}).keys()
    owned = target.link.config.host_owned
    sent.update({k: v for k, v in owned.items() if v is not None and k in accepts})
    return sent


async def invoke(
    target: Target, call: PendingCall, ui: HostUI, extras: CallExtras | None = None
) -> Outcome:
    """`extras`: what the `on_call` hook adds (already checked): `_meta`, headers, arguments."""
    link, tool = target.link, target.tool
    client = link.client
    if client is None or not link.up:
        return Outcome(
            "error",
            error=f"The {link.name!r} server is unavailable right now (it is reconnecting); "
            "its tools are back once it is.",
        )
    sent = arguments_for(target, call.arguments)
    extras = extras or CallExtras()
    sent.update(extras.arguments)
    deadline = link.config.deadline(tool.name)

    async def attempt(clock: Clock) -> CallResult:
        def on_progress(done: float, total: float | None, message: str | None) -> None:
            clock.progressed()
            ui.progress(call, done, total, message)

        # The host's deadline bounds the call (the client's own timeout would cut it short);
        # the link pauses it while the server's questions wait for the user.
        with link.timing(clock):
            return await client.call_tool(
                tool.name,
                sent,
                timeout=None,
                progress=on_progress,
                meta=extras.meta or None,
                headers=extras.headers or None,
            )

    try:
        raw = await within(deadline, attempt)
    except DeadlineExceeded as exc:
        link.report(exc)
        unsure = "" if _read_only(target) else _UNSURE
        return Outcome(
            "timeout",
            error=f"The call to {link.name} > {tool.name} got no answer within its deadline "
            f"({exc.deadline.describe()}) and was cancelled.{unsure}",
        )
    except MCPError as exc:
        link.healthy()
        return Outcome("error", error=f"The server rejected the call: {exc.message}")
    except ClientError as exc:
        link.report(exc)
        if connection_lost(exc):  # its text may quote the server's stderr: not for the model
            unsure = "" if _read_only(target) else _UNSURE
            return Outcome(
                "error",
                error=f"The connection to the {link.name!r} server failed during the call; "
                f"the host is reconnecting.{unsure}",
            )
        return Outcome("error", error=f"The server could not complete the call: {exc}")
    link.healthy()
    return Outcome("tool-error" if raw.is_error else "ok", raw)


def _read_only(target: Target) -> bool:
    """Only a trusted server's annotations are believed (TOOL-12)."""
    return target.link.config.trusted and target.tool.annotations.get("readOnlyHint") is True


_UNSURE = " It may or may not have taken effect: check before calling it again."
