"""`Subscription`: one `subscriptions/listen` stream, open once acknowledged (SUB-03/06), and
opened again when it breaks without its final result (SUB-13)."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..protocol.errors import error_from_wire
from ..protocol.jsonrpc import JSONObject, Notification, RequestId
from .errors import InvalidResponse, TransportError
from .lifecycle import AsyncResource

if TYPE_CHECKING:
    from .session import ClientSession

log = logging.getLogger("mcpkit.client")

#: Filter keys and the change each stands for, told once a stream is opened again.
_LISTS = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}
Reopen = Callable[[], AsyncGenerator[JSONObject, None]]


def listen_filter(
    tools: bool, prompts: bool, resources: bool, resource_uris: Sequence[str]
) -> JSONObject:
    """The `notifications` filter (SubscriptionFilter) of a `subscriptions/listen` request."""
    flags = zip(_LISTS, (tools, prompts, resources), strict=True)
    wanted: JSONObject = {key: True for key, on in flags if on}
    if resource_uris:
        wanted["resourceSubscriptions"] = list(resource_uris)
    return wanted


def listen_stream(
    session: ClientSession,
    stream: Callable[[RequestId, str, JSONObject], AsyncGenerator[JSONObject, None]],
    wanted: JSONObject,
    on_note: Callable[[Notification], Any],
    reopen: bool,
    timeout: float | None,
) -> Subscription:
    """A modern `subscriptions/listen` over a transport's `stream`; each (re-)open is a new
    request with a new id (traced as sent and received when the session has a `trace`)."""
    params = {"notifications": wanted, "_meta": session.request_meta()}

    def open_stream() -> AsyncGenerator[JSONObject, None]:
        request_id = session.next_id()
        messages = stream(request_id, "subscriptions/listen", params)
        if session.trace is None:
            return messages
        sent = {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen"}
        session.trace("send", {**sent, "params": params})
        return traced(messages, session.trace)

    again = open_stream if reopen else None
    return Subscription(open_stream(), on_note, reopen=again, timeout=timeout)


async def traced(
    messages: AsyncGenerator[JSONObject, None], trace: Callable[[str, JSONObject], None]
) -> AsyncGenerator[JSONObject, None]:
    """The messages of a stream, each shown to `trace` as received."""
    try:
        async for message in messages:
            trace("recv", {"jsonrpc": "2.0", **message})
            yield message
    finally:
        await messages.aclose()


class Subscription(AsyncResource):
    """`async with client.subscribe(tools=True) as sub: async for note in sub: ...`

    Entering waits for the server's acknowledgement, so a change made after `__aenter__`
    returns is delivered. `acknowledged` is the filter the server honours (SUB-06).
    Leaving closes the stream, which ends the subscription on the server (SUB-10).

    With `reopen` (HTTP), a stream that breaks or ends without its final result is opened again
    with capped exponential backoff (up to `max_backoff` seconds between attempts) for as long
    as the caller iterates (SUB-13); `reopened` counts it. Changes may have been missed
    meanwhile, so each re-open yields one notice per listened list and resource (as if they had
    changed), and those invalidate the client's caches as real ones do. A server that refuses
    the stream (a JSON-RPC error, HTTP 4xx) ends it for good.
    """

    def __init__(
        self,
        messages: AsyncGenerator[JSONObject, None],
        on_note: Callable[[Notification], Any],
        *,
        reopen: Reopen | None = None,
        timeout: float | None = 60.0,
        max_backoff: float = 5.0,
    ) -> None:
        self._messages = messages
        self._on_note = on_note
        self._reopen = reopen
        self._timeout = timeout
        self._max_backoff = max_backoff
        self._resync: deque[Notification] = deque()
        self.acknowledged: JSONObject = {}
        self.closed = False
        self.reopened = 0

    async def _acknowledge(self) -> None:
        first = await self._next_message()
        if first is None or first.get("method") != "notifications/subscriptions/acknowledged":
            raise InvalidResponse(
                "the listen stream did not start with an acknowledgement (SUB-03)"
            )
        notifications = (first.get("params") or {}).get("notifications")
        self.acknowledged = notifications if isinstance(notifications, dict) else {}

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
            if self._resync:
                note = self._resync.popleft()
            else:
                try:
                    message = await self._next_message()
                except TransportError as exc:
                    if self._reopen is None or _refused(exc):
                        raise
                    message = None
                if message is not None and "id" in message:
                    break  # the server ended the subscription with its result (SUB-11)
                if message is None or "method" not in message:
                    if self._reopen is None:
                        break  # the stream ended (a stdio server exited, ...)
                    await self._open_again()  # an unexpected disconnect (SUB-13)
                    continue
                note = Notification(message["method"], message.get("params"))
            self._on_note(note)
            return note
        self.closed = True
        raise StopAsyncIteration

    async def _open_again(self) -> None:
        import random  # jitter, needed only here: kept out of `import mcpkit.client`

        assert self._reopen is not None
        attempt = 0
        while True:
            await self._close_stream()
            delay = min(self._max_backoff, 0.1 * 2 ** min(attempt, 16))
            await asyncio.sleep(delay * random.uniform(0.5, 1.0))
            self._messages = self._reopen()
            try:
                async with asyncio.timeout(self._timeout):
                    await self._acknowledge()
            except (TransportError, TimeoutError) as exc:
                if isinstance(exc, TransportError) and _refused(exc):
                    raise
                attempt += 1
                log.debug("listen stream: re-open attempt %d failed: %s", attempt, exc)
                continue
            break
        self.reopened += 1
        log.info("listen stream opened again (%d)", self.reopened)
        wanted = self.acknowledged
        for key, method in _LISTS.items():
            if wanted.get(key):
                self._resync.append(Notification(method, {}))
        for uri in wanted.get("resourceSubscriptions") or ():
            self._resync.append(Notification("notifications/resources/updated", {"uri": uri}))

    async def _close_stream(self) -> None:
        await self._messages.aclose()

    async def open(self) -> None:
        """What `async with` does first: wait for the server's acknowledgement."""
        await self._acknowledge()

    async def close(self) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self.closed = True
        await self._close_stream()


def _refused(exc: TransportError) -> bool:
    """An HTTP 4xx answer is the server's decision, not an outage."""
    return exc.status is not None and 400 <= exc.status < 500
