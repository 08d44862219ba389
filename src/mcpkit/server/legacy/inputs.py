"""`LegacyInputs`: the InputChannel of a 2025-11-25 session. `ctx.elicit` / `ctx.sample` /
`ctx.list_roots` become real `elicitation/create`, `sampling/createMessage` and `roots/list`
requests on the stream of the request being served, and the handler awaits the client's answers
(CHECKLIST B.1.5, B.4 "Server → client input"). The handler runs once: no re-execution.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any

from ...protocol.meta import RequestMeta
from ..inputs import InputCall, check_capability, parse_answer

if TYPE_CHECKING:
    from .session import LegacySession, Outbox

#: Revisions before 2025-11-25 know neither elicitation modes nor URL elicitation.
_NO_MODES = frozenset({"2025-06-18", "2025-03-26", "2024-11-05"})


class LegacyInputs:
    """Asks the session's client, over the outbox of one request."""

    __slots__ = ("meta", "outbox", "session")

    #: Nothing is carried between rounds: the handler runs once.
    state: None = None

    @property
    def session_id(self) -> str:
        return self.session.id

    def __init__(self, session: LegacySession, meta: RequestMeta, outbox: Outbox) -> None:
        self.session = session
        self.meta = meta
        self.outbox = outbox

    async def resolve(self, calls: list[InputCall]) -> list[Any]:
        for call in calls:
            # ELIC-09 / SAMP-04 on this wire: the capabilities declared at initialize.
            check_capability(self.meta, call)
        if len(calls) == 1:
            return [await self._ask(calls[0])]
        tasks = [asyncio.ensure_future(self._ask(call)) for call in calls]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for task in tasks:
                task.cancel()
            raise

    async def _ask(self, call: InputCall) -> Any:
        method = call.request["method"]
        raw = await self.session.ask(method, self._params(call), self.outbox)
        return parse_answer(call, raw, f"The client answered {method} with an invalid result")

    def _params(self, call: InputCall) -> dict[str, Any]:
        params = dict(call.request.get("params") or {})
        if call.request["method"] == "elicitation/create":
            if params.get("mode") == "url":
                # 2025-11-25 URL mode names the elicitation (ELIC: elicitationId is required).
                params["elicitationId"] = uuid.uuid4().hex
            elif self.session.version in _NO_MODES:
                params.pop("mode", None)
        return params
