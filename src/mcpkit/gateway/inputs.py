"""Input a backend asks for, passed on to the client calling the gateway.

A backend's question reaches the gateway in one of two ways: as an `inputRequests` entry of a
2026-07-28 `input_required` result (or of a task), or, from a 2025-11-25 backend, as a real
`elicitation/create`, `sampling/createMessage` or `roots/list` request while the call is in
flight. Either way it becomes a `passthrough` `InputCall` that the gateway's handler awaits on
its own `Context`: the front client answers it through MRTR, a real request on its legacy
session, or `tasks/update`, whatever era it speaks. Answers go back to the backend unchanged
(the backend checks them, as it would a direct answer).

A legacy backend's request has to wait for the front's answer while the backend call stays
open. A `Bridge` carries one such call: the backend's requests queue up on it, and when the
front answers through MRTR (a new request, perhaps seconds later) the call is `park`ed under an
unguessable id sealed in the front's `requestState`, and picked up again by the retry. Parked
calls live in the gateway process and are cancelled after `PARK_SECONDS` without a retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Awaitable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ..client.errors import ClientError
from ..protocol.errors import InvalidParams
from ..server.inputs import InputCall

#: How long a legacy backend's call may wait for the front's MRTR retry.
PARK_SECONDS = 600.0


def passthrough(key: str, request: Any) -> InputCall:
    """A backend's input request as a question of the gateway's own handler."""
    if not isinstance(request, dict) or not isinstance(request.get("params", {}), dict):
        raise InvalidParams(f"the backend sent a malformed input request {key!r}")
    method, params = request.get("method"), request.get("params") or {}
    if method == "elicitation/create":
        mode = params.get("mode") or "form"
        capability: dict[str, Any] = {"elicitation": {"url" if mode == "url" else "form": {}}}
    elif method == "sampling/createMessage":
        capability = {"sampling": {"tools": {}} if params.get("tools") else {}}
    elif method == "roots/list":
        capability = {"roots": {}}
    else:
        raise InvalidParams(f"the backend asked for {method!r}, which the gateway cannot forward")
    return InputCall(key, capability, {"method": method, "params": params}, _as_is)


def _as_is(raw: Any) -> Any:
    if not isinstance(raw, dict):
        raise ValueError("expected a result object")
    return raw


@dataclass(eq=False)
class Bridge:
    """One backend call in flight whose backend may ask questions on its session."""

    call: asyncio.Task[dict[str, Any]]
    id: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    asked: int = 0
    #: Questions not answered yet, oldest first: (key, request, the backend's waiting answer).
    pending: list[tuple[str, dict[str, Any], asyncio.Future[Any]]] = field(default_factory=list)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _expiry: asyncio.TimerHandle | None = None

    async def ask(self, method: str, params: dict[str, Any]) -> Any:
        """The backend's request (from its session): wait for the front's answer."""
        self.asked += 1
        entry = (str(self.asked), {"method": method, "params": params}, _future())
        self.pending.append(entry)
        self._arrived.set()
        try:
            return await entry[2]
        finally:
            with contextlib.suppress(ValueError):
                self.pending.remove(entry)

    async def next(self) -> tuple[str, dict[str, Any]] | None:
        """The oldest open question, or None once the backend call has ended."""
        while not self.pending and not self.call.done():
            self._arrived.clear()
            waiter = asyncio.ensure_future(self._arrived.wait())
            try:
                await asyncio.wait((waiter, self.call), return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
        if not self.pending:
            return None
        key, request, _ = self.pending[0]
        return key, request

    def answer(self, key: str, value: Any) -> None:
        for entry in self.pending:
            if entry[0] == key:
                self.pending.remove(entry)
                if not entry[2].done():
                    entry[2].set_result(value)
                return

    def cancel(self) -> None:
        self.keep()
        self.call.cancel()

    def expire_after(self, seconds: float) -> None:
        """Parked: cancelled unless resumed within `seconds`."""
        self.keep()
        self._expiry = asyncio.get_running_loop().call_later(seconds, self.cancel)

    def keep(self) -> None:
        """No expiry (resumed, or done)."""
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None


def _future() -> asyncio.Future[Any]:
    return asyncio.get_running_loop().create_future()


#: The bridge of the backend call being made in this task (and the tasks it starts).
CURRENT_BRIDGE: ContextVar[Bridge | None] = ContextVar("mcpkit_gateway_bridge", default=None)


class Bridges:
    """The bridges of one backend connection: in flight, and parked awaiting a retry."""

    def __init__(self) -> None:
        self.active: set[Bridge] = set()
        self.parked: dict[str, Bridge] = {}

    def start(self, call: Awaitable[dict[str, Any]]) -> Bridge:
        bridge_box: list[Bridge] = []

        async def run() -> dict[str, Any]:
            CURRENT_BRIDGE.set(bridge_box[0])
            return await call

        bridge = Bridge(asyncio.get_running_loop().create_task(run()))
        bridge_box.append(bridge)
        self.active.add(bridge)
        bridge.call.add_done_callback(lambda _: self._forget(bridge))
        return bridge

    def _forget(self, bridge: Bridge) -> None:
        self.active.discard(bridge)
        self.parked.pop(bridge.id, None)
        bridge.keep()

    def park(self, bridge: Bridge) -> str:
        self.parked[bridge.id] = bridge
        bridge.expire_after(PARK_SECONDS)
        return bridge.id

    def resume(self, bridge_id: Any) -> Bridge:
        bridge = self.parked.pop(bridge_id, None) if isinstance(bridge_id, str) else None
        if bridge is None:
            raise InvalidParams(
                "Invalid params: the call this requestState continues is gone (it expired, "
                "or the gateway restarted); send the request again without it"
            )
        bridge.keep()
        return bridge

    def attributed(self) -> Bridge | None:
        """The bridge a backend request belongs to: the task's own, else the only one open
        (a legacy stdio backend does not say which call asks); None outside any call."""
        bridge = CURRENT_BRIDGE.get()
        if bridge is not None:
            return bridge
        if len(self.active) == 1:
            return next(iter(self.active))
        return None

    def current(self) -> Bridge:
        """The bridge a backend request belongs to (`attributed`), or an error."""
        bridge = self.attributed()
        if bridge is not None:
            return bridge
        raise ClientError(
            "the backend asked for input outside a call the gateway can attribute it to"
        )

    def close(self) -> None:
        for bridge in list(self.active):
            bridge.cancel()
