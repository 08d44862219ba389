"""Multi round-trip input on the client (MRTR-*): a request answered `input_required` is sent
again with every answer, the original params and the server's `requestState`, until it
completes; a `tools/call` answered with a task is followed to its end (tasks extension)."""

from __future__ import annotations

from types import EllipsisType

from ..protocol.jsonrpc import JSONObject
from ..protocol.tasks import TASK_AUGMENTED_METHODS
from .deadline import Deadline
from .errors import ClientError, InvalidResponse
from .inputs import InputHandlers
from .session import ClientSession
from .tasks import follow_task

#: The methods a server may answer with `input_required` (MRTR-04).
MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})


async def complete(
    session: ClientSession,
    method: str,
    params: JSONObject,
    handlers: InputHandlers,
    max_rounds: int,
    timeout: float | EllipsisType | None,
    deadline: Deadline | None,
) -> JSONObject:
    """The final result of `method`, after at most `max_rounds` rounds of input answered by
    `handlers`."""
    original = params
    for _ in range(max_rounds + 1):
        result = await session.request(method, params, timeout=timeout, deadline=deadline)
        kind = result.get("resultType")
        if kind == "task":
            if method not in TASK_AUGMENTED_METHODS:
                raise InvalidResponse(f"{method} cannot be answered with a task (TASK-04)")
            return await follow_task(result, session.request, handlers.fulfil)
        if kind != "input_required":
            return result
        if method not in MRTR_METHODS:
            raise InvalidResponse(f"{method} cannot answer input_required (MRTR-04)")
        requests = result.get("inputRequests") or {}
        if not isinstance(requests, dict):
            raise InvalidResponse("inputRequests is not an object")
        # MRTR-16/17/19/22: all answers, the original params, the state byte for byte.
        params = {**original, "inputResponses": await handlers.fulfil(requests)}
        if "requestState" in result:
            params["requestState"] = result["requestState"]
    raise ClientError(f"{method} still needs input after {max_rounds} rounds")
