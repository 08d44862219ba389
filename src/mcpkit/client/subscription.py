"""`Subscription`: one `subscriptions/listen` stream, open once acknowledged (SUB-03/06)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import Any

from ..protocol.errors import error_from_wire
from ..protocol.jsonrpc import JSONObject, Notification
from .errors import InvalidResponse


class Subscription:
    """`async with client.subscribe(tools=True) as sub: async for note in sub: ...`

    Entering waits for the server's acknowledgement, so a change made after `__aenter__`
    returns is delivered. `acknowledged` is the filter the server honours (SUB-06).
    Leaving closes the stream, which ends the subscription on the server (SUB-10).
    """

    def __init__(
        self, messages: AsyncIterator[JSONObject], on_note: Callable[[Notification], Any]
    ) -> None:
        self._messages = messages
        self._on_note = on_note
        self.acknowledged: JSONObject = {}
        self.closed = False

    async def __aenter__(self) -> Subscription:
        first = await self._next_message()
        if first is None or first.get("method") != "notifications/subscriptions/acknowledged":
            await self.aclose()
            raise InvalidResponse(
                "the listen stream did not start with an acknowledgement (SUB-03)"
            )
        notifications = (first.get("params") or {}).get("notifications")
        self.acknowledged = notifications if isinstance(notifications, dict) else {}
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _next_message(self) -> JSONObject | None:
        try:
            message = await self._messages.__anext__()
        except StopAsyncIteration:
            return None
        if message.get("error"):
            raise error_from_wire(message["error"])
        return message

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Notification:
        while not self.closed:
            message = await self._next_message()
            if message is None or "method" not in message:
                self.closed = (
                    True  # the server ended the subscription (SUB-11), or the stream broke
                )
                break
            note = Notification(message["method"], message.get("params"))
            self._on_note(note)
            return note
        raise StopAsyncIteration

    async def aclose(self) -> None:
        self.closed = True
        close = getattr(self._messages, "aclose", None)
        if close is not None:
            await close()
