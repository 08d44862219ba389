"""One allowed tool call on its server: host-owned values filled in, one idempotency key, each
attempt run under the tool's deadline, repeated only when that is safe (`retry.py`), and every
failure turned into a clear line for the model and an outcome for the audit trail. The server
link hears how each attempt went (a lost connection takes it down; a retry waits until the
link is back)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ..client import CallResult, Client, ClientError
from ..client.errors import ConnectFailed
from ..protocol.errors import MCPError
from .connections import Target
from .consent import PendingCall
from .deadlines import Clock, DeadlineExceeded, within
from .hooks import CallExtras
from .link import ServerLink
from .retry import CallSafety, Failure, OutcomeUnknown, call_with_retries, classify, new_key
from .supervision import LinkState, connection_lost
from .ui import HostUI


@dataclass(frozen=True, slots=True)
class Outcome:
    """`raw` when the server answered; otherwise `error`, the message for the model.
    `kind` is `ok`, `tool-error`, `error`, `timeout` or `unknown` (as the audit log records
    it); `key` the call's idempotency key and `attempts` how many times it was sent."""

    kind: str
    raw: CallResult | None = None
    error: str | None = None
    key: str | None = None
    attempts: int = 0


def arguments_for(target: Target, arguments: dict[str, Any]) -> dict[str, Any]:
    """The model's arguments plus the host-owned values the tool accepts."""
    sent = dict(arguments)
    accepts = (target.tool.input_schema.get("properties") or {}).keys()
    owned = target.link.config.host_owned
    sent.update({k: v for k, v in owned.items() if v is not None and k in accepts})
    return sent


class NotBack(ConnectFailed):
    """A retry found the server's link still down when its time ran out: never sent."""


async def invoke(
    target: Target, call: PendingCall, ui: HostUI, extras: CallExtras | None = None
) -> Outcome:
    """`extras`: what the `on_call` hook adds (already checked): `_meta`, headers, arguments."""
    link, tool = target.link, target.tool
    client = link.client
    if client is None or not link.up:
        return Outcome("error", error=link.unavailable())
    sent = arguments_for(target, call.arguments)
    extras = extras or CallExtras()
    sent.update(extras.arguments)
    deadline = link.config.deadline(tool.name)
    # Annotations count only from a trusted server (TOOL-12).
    safety = CallSafety(client.supports_idempotency, link.config.trusted, tool.annotations)
    key = new_key()  # one per model tool call: every retry of it carries the same
    loop = asyncio.get_running_loop()
    give_up = loop.time() + deadline.overall  # retries wait this long for a link to be back
    attempts = 0
    unsure = False  # an attempt failed after it may have reached the server

    async def send(to: Client, key: str, clock: Clock) -> CallResult:
        def on_progress(done: float, total: float | None, message: str | None) -> None:
            clock.progressed()
            ui.progress(call, done, total, message)

        # The host's deadline bounds the call (the client's own timeout would cut it short);
        # the link pauses it while the server's questions wait for the user.
        with link.timing(clock):
            return await to.call_tool(
                tool.name,
                sent,
                timeout=None,
                progress=on_progress,
                idempotency_key=key,
                meta=extras.meta or None,
                headers=extras.headers or None,
            )

    async def attempt(key: str) -> CallResult:
        nonlocal attempts, unsure
        to = client if attempts == 0 else await _back(link, give_up - loop.time())
        attempts += 1
        try:
            raw = await within(deadline, lambda clock: send(to, key, clock))
        except MCPError:
            link.healthy()
            raise
        except (ClientError, DeadlineExceeded) as exc:
            link.report(exc)
            unsure = unsure or classify(exc) in (Failure.UNKNOWN, Failure.TIMED_OUT)
            raise
        link.healthy()
        return raw

    where = f"{link.name} > {tool.name}"
    try:
        raw = await call_with_retries(
            attempt, tool=where, safety=safety, policy=link.retry, key=key
        )
    except OutcomeUnknown as exc:
        timed_out = isinstance(exc.cause, DeadlineExceeded)
        return Outcome("timeout" if timed_out else "unknown", None, str(exc), key, attempts)
    except MCPError as exc:
        return Outcome("error", None, f"The server rejected the call: {exc.message}", key, attempts)
    except (ClientError, DeadlineExceeded) as exc:
        unsure = unsure and not _read_only(target)
        text = _failed(link, where, exc, attempts, unsure)
        if unsure:
            text += (
                f" It may or may not have taken effect (its idempotency key is {key}): "
                "check before calling it again."
            )
        kind = "timeout" if isinstance(exc, DeadlineExceeded) else "error"
        return Outcome(kind, None, text, key, attempts)
    return Outcome("tool-error" if raw.is_error else "ok", raw, None, key, attempts)


async def _back(link: ServerLink, seconds: float) -> Client:
    """The link's client for a retry: once the link is up again (a lost connection takes it
    down and its supervisor reconnects), within `seconds`."""
    if not link.up and seconds > 0:
        try:
            async with asyncio.timeout(seconds):
                await link.until(LinkState.READY, LinkState.DEGRADED)
        except TimeoutError:
            pass
    if link.client is None or not link.up:
        raise NotBack(f"the {link.name!r} server was not back in time to repeat the call")
    return link.client


def _failed(link: ServerLink, where: str, exc: BaseException, attempts: int, unsure: bool) -> str:
    """The model's line for a call that failed for good (`unsure`: an attempt may have run;
    the caller adds that note)."""
    tries = f" ({attempts} attempts)" if attempts > 1 else ""
    if isinstance(exc, DeadlineExceeded):
        return (
            f"The call to {where} got no answer within its deadline "
            f"({exc.deadline.describe()}) and was cancelled{tries}."
        )
    if isinstance(exc, ConnectFailed) and unsure:  # a retry that could not be sent
        return (
            f"The connection to the {link.name!r} server failed during the call, and the "
            f"server could not be reached to repeat it{tries}; the host is reconnecting."
        )
    if isinstance(exc, ConnectFailed):
        return (
            f"The {link.name!r} server could not be reached{tries}, so the call did not run; "
            "the host is reconnecting."
        )
    if connection_lost(exc):  # its text may quote the server's stderr: not for the model
        return (
            f"The connection to the {link.name!r} server failed during the call{tries}; "
            "the host is reconnecting."
        )
    return f"The server could not complete the call{tries}: {exc}"


def _read_only(target: Target) -> bool:
    """Only a trusted server's annotations are believed (TOOL-12)."""
    return target.link.config.trusted and target.tool.annotations.get("readOnlyHint") is True
