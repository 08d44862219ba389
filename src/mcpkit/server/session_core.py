"""What every transport does with an admitted message, written once and free of I/O: the
transports (stdio, Streamable HTTP of both eras, memory) read bytes, hand a complete message
to `admit`, and act on it through here; they only move bytes and timers.

- `dispatch`: the one place an admission becomes an action. A transport implements
  `Handler` (one method per action) and gets each message routed by its kind and era:

      ServerRequest, 2025-11-25       session_request   (the session answers it)
      ServerRequest, listen           listen            (a stream of `listen_frames`)
      ServerRequest                   call              (answer it)
      OpenSession                     open_session      (a 2025-11-25 `initialize`)
      ClientNotification              notification      (cancelled, initialized, ...)
      ClientResponse                  response          (to a session's own request)
      None                            nothing

- `listen_frames`: the one listen loop (SUB-*): acknowledgement, notifications, keep-alive
  ticks, the final result (none after an overflow); the transport frames and writes them.
- `InFlight`: the request ids in flight on one connection, their duplicates refused
  (BASE-05) and their cancellation by id (`notifications/cancelled`, CANC-*).

`dispatch` is on every request's path: it is one `type() is` test per kind, and a transport
passes its per-request context through it rather than allocating a closure.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Hashable
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ..protocol.errors import InvalidRequest
from .admission import (
    CANCEL_REQUESTED,
    LEGACY,
    Admission,
    ClientNotification,
    ClientResponse,
    OpenSession,
    ServerRequest,
)

if TYPE_CHECKING:
    import asyncio

    from .subscriptions import Subscription

C = TypeVar("C", contravariant=True)
R = TypeVar("R", covariant=True)
LISTEN = "subscriptions/listen"
#: The error a request reusing the id of one still in flight is answered with.
ID_IN_USE = InvalidRequest("Invalid request: id already in use (BASE-05)")


class Handler(Protocol[C, R]):
    """What a transport does with each kind of admitted message; `ctx` is its per-message
    context (HTTP: the exchange; stdio: the session), passed through `dispatch` untouched."""

    def call(self, request: ServerRequest, ctx: C) -> R: ...
    def listen(self, request: ServerRequest, ctx: C) -> R: ...
    def session_request(self, request: ServerRequest, ctx: C) -> R: ...
    def open_session(self, request: OpenSession, ctx: C) -> R: ...
    def notification(self, note: ClientNotification, ctx: C) -> R: ...
    def response(self, response: ClientResponse, ctx: C) -> R: ...
    def nothing(self, ctx: C) -> R: ...


def dispatch(admitted: Admission, handler: Handler[C, R], ctx: C) -> R:
    """Route one admitted message to the handler's method for it (see the module's table)."""
    if type(admitted) is ServerRequest:
        if admitted.era is LEGACY:
            return handler.session_request(admitted, ctx)
        if admitted.method == LISTEN:
            return handler.listen(admitted, ctx)
        return handler.call(admitted, ctx)
    if type(admitted) is ClientNotification:
        return handler.notification(admitted, ctx)
    if type(admitted) is OpenSession:
        return handler.open_session(admitted, ctx)
    if type(admitted) is ClientResponse:
        return handler.response(admitted, ctx)
    return handler.nothing(ctx)


async def listen_frames(
    sub: Subscription, request_id: Any, keepalive: float | None
) -> AsyncGenerator[dict[str, Any] | None, None]:
    """One listen stream as messages to write: the acknowledgement, each notification, None
    for a keep-alive tick (every `keepalive` seconds of quiet; None: never), and the final
    result when the server ends the stream. After an overflow the stream ends without a
    result (the client re-opens it). Closing the subscription is the caller's."""
    yield sub.acknowledgement()
    while True:
        try:
            note = await sub.next(keepalive)
        except EOFError:
            if not sub.overflowed:
                yield {"jsonrpc": "2.0", "id": request_id, "result": sub.final_result()}
            return
        yield note


T = TypeVar("T", bound="asyncio.Task[Any]")


class InFlight(Generic[T]):
    """The requests in flight on one connection, by id: an id is in use until its request is
    over (BASE-05), and `notifications/cancelled` cancels the one it names (CANC-*)."""

    __slots__ = ("tasks",)

    def __init__(self) -> None:
        self.tasks: dict[Hashable, T] = {}

    def __len__(self) -> int:
        return len(self.tasks)

    def in_use(self, request_id: Hashable) -> bool:
        return request_id in self.tasks

    def start(self, request_id: Hashable, task: T) -> None:
        self.tasks[request_id] = task

    def cancel(self, note: ClientNotification, *, forget: bool = True) -> None:
        """Cancel the request `note` names, if it is a cancellation of one in flight. It is
        forgotten at once (its id free again, nothing more sent: TR-STDIO-10), or with
        `forget=False` (a 2025-11-25 session) when its task ends."""
        cancelled = note.cancelled_id
        if cancelled is None:
            return
        target = self.tasks.pop(cancelled, None) if forget else self.tasks.get(cancelled)
        if target is not None:
            target.cancel(CANCEL_REQUESTED)

    def forget(self, request_id: Hashable, task: T | None) -> None:
        """`task`, the request's own, is over: its id may be used again."""
        if self.tasks.get(request_id) is task:
            del self.tasks[request_id]

    def running(self) -> list[T]:
        return list(self.tasks.values())
