"""Forwarding one front request (`tools/call`, `prompts/get`, `resources/read`) to a backend.

The front request's client capabilities go along, so the backend asks only for what the front
client can answer (MRTR-13); its progress token is replaced by one of the gateway's and the
backend's progress comes back under the front's; its log level goes along too. Cancelling the
front request cancels the backend request the way the backend's transport defines. A tool
call runs under the clock of its deadline (the gateway chain's `Deadline` policy, or the
proxy's `within`): progress restarts it where the config says so, a question waiting for the
front's user pauses it, and running out cancels the backend call, a task included.

Input the backend asks for is passed to the front (`inputs.py`):

- a 2026-07-28 backend answers `input_required`: its questions become the gateway handler's
  questions, and its `requestState` rides, sealed, inside the gateway's own requestState
  (bound to the front caller: MRTR-10), so a retry continues the backend's round;
- a 2025-11-25 backend asks with real requests: a `Bridge` holds the call open.

An idempotency key (`dev.mcpkit/idempotencyKey`) goes on as a key derived from the front
caller and theirs (`caller_key`), so one caller's key never meets another's at the backend.

A backend that answers with a task (only when the front declared the tasks extension) turns the
front call into a gateway task that follows it: its questions reach the front through
`tasks/get`, the front's `tasks/cancel` cancels it on the backend, and the front's task id is
the gateway's own, bound to the front caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from ..client import ClientError, ConnectFailed, ConnectionClosed, RequestTimeout, TaskCancelled
from ..client.mrtr import MRTR_METHODS
from ..client.tasks import follow_task
from ..host.deadlines import Clock
from ..protocol.errors import InternalError
from ..protocol.idempotency import IDEMPOTENCY_KEY
from ..protocol.versions import META_CLIENT_CAPABILITIES
from ..server.context import Context
from ..server.inputs import InputCall, InputRequired
from ..server.results import error_result
from .failures import BackendLost, Unavailable, backend_lost
from .inputs import passthrough
from .link import CURRENT_CALL
from .shapes import completed

if TYPE_CHECKING:
    from ..client import Client
    from .inputs import Bridges
    from .link import UpstreamLink

#: Keys of the gateway's own data in the handler's sealed state.
_ROUND = "mcpkit.gateway/round"
_PARKED = "mcpkit.gateway/parked"
_MCP_META = "io.modelcontextprotocol/"


def backend_meta(ctx: Context, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `_meta` a forwarded request carries: the front's own keys (not the protocol's,
    which the gateway's client sets) and the front's capabilities. An idempotency key is made
    the caller's own: the backend scopes keys by its caller, which is the gateway for all."""
    out = {
        k: v
        for k, v in ctx.meta.raw.items()
        if not k.startswith(_MCP_META) and k != "progressToken"
    }
    out[META_CLIENT_CAPABILITIES] = ctx.client_capabilities
    key = out.get(IDEMPOTENCY_KEY)
    if key is not None:
        out[IDEMPOTENCY_KEY] = caller_key(ctx.principal, key)
    if extra:
        out.update(extra)
    return out


def caller_key(principal: str | None, key: Any) -> str:
    """The key the backend gets for a front caller's key: the same caller's retry finds it
    again, another caller's same key never does."""
    digest = hashlib.sha256(orjson.dumps([principal, key])).hexdigest()
    return f"gw-{digest[:48]}"


async def forward(
    link: UpstreamLink,
    method: str,
    params: dict[str, Any],
    ctx: Context,
    *,
    meta: dict[str, Any] | None = None,
    clock: Clock | None = None,
) -> dict[str, Any]:
    """The backend's final result for one front request (input and tasks passed through).
    `clock`: the call's running deadline (the chain's `Deadline` policy holds it; without
    one the client's own request timeout applies). A backend that goes away meanwhile raises
    `BackendLost` (its JSON-RPC error within). A lazy backend not running is started first."""
    await link.wake()
    client, bridges = await link.client_for(ctx.principal)
    body = {**params, "_meta": backend_meta(ctx, meta)}
    backend = _Backend(client, method, ctx, clock)
    token = CURRENT_CALL.set(ctx)
    try:
        with link.in_use():  # a lazy backend is not stopped meanwhile
            if client.legacy is not None:
                return await _on_session(bridges, backend, body)
            return await _stateless(backend, body)
    except ConnectionClosed as exc:
        link.report(exc)  # the link goes down and reconnects
        raise BackendLost(await backend_lost(link.name, client, exc)) from None
    finally:
        CURRENT_CALL.reset(token)


@dataclass(frozen=True, slots=True)
class _Backend:
    """One front request on its way to a backend: the backend's client, the method, the
    front's request context and the call's running deadline (None: the client's timeout)."""

    client: Client
    method: str
    ctx: Context
    clock: Clock | None

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        """One backend request; its progress comes back under the front's token and restarts
        the deadline where the config says so (CANC-08)."""
        ctx, clock = self.ctx, self.clock
        restarts = clock is not None and clock.deadline.restart_on_progress
        progress = None
        if ctx.meta.progress_token is not None or restarts:

            async def progress(done: float, total: float | None, message: str | None) -> None:
                if clock is not None:
                    clock.progressed()
                if ctx.meta.progress_token is not None:
                    await ctx.report_progress(done, total, message)

        return await self.client.request(
            self.method,
            body,
            raw=True,
            use_cache=False,
            timeout=... if clock is None else None,  # the clock bounds the call
            progress=progress,
            log_level=ctx.meta.log_level,
        )

    async def ask(self, *calls: InputCall) -> list[Any]:
        """The front's answers to the backend's questions: time spent waiting for the user
        does not count against the deadline (as in the host's calls)."""
        with self.clock.paused() if self.clock is not None else contextlib.nullcontext():
            return await self.ctx.gather(*calls)


async def _stateless(backend: _Backend, base: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 backend: its `input_required` rounds become the gateway handler's."""
    state, method = backend.ctx.state, backend.method
    body = base
    pending = state.get(_ROUND)
    if pending is not None:
        body = await _answered(backend, base, pending)
    while True:
        result = await backend.send(body)
        kind = result.get("resultType")
        if kind == "input_required" and method in MRTR_METHODS:
            requests = result.get("inputRequests")
            if not isinstance(requests, dict) or not requests:
                return result  # nothing to ask: the front sees what the backend said
            number = (pending or {}).get("n", 0) + 1
            pending = {"n": number, "q": requests, "s": result.get("requestState")}
            state[_ROUND] = pending
            body = await _answered(backend, base, pending)
            continue
        if kind == "task" and method == "tools/call":
            return await _follow(backend, result)
        state.pop(_ROUND, None)
        return result


async def _answered(
    backend: _Backend, base: dict[str, Any], pending: dict[str, Any]
) -> dict[str, Any]:
    """The retry of a backend round: the front's answers to its questions, and its state.
    Front keys carry the round number: a backend may reuse a key in a later round."""
    questions: dict[str, Any] = pending["q"]
    calls = [passthrough(f"{pending['n']}.{key}", req) for key, req in questions.items()]
    answers = await backend.ask(*calls)
    body = {**base, "inputResponses": dict(zip(questions, answers, strict=True))}
    if pending.get("s") is not None:
        body["requestState"] = pending["s"]
    return body


async def _on_session(bridges: Bridges, backend: _Backend, body: dict[str, Any]) -> dict[str, Any]:
    """A 2025-11-25 backend: its real requests wait on a bridge for the front's answers; a
    front answering through MRTR finds the call again through the sealed bridge id."""
    ctx = backend.ctx
    state = ctx.state
    parked = state.pop(_PARKED, None)
    bridge = bridges.resume(parked) if parked is not None else bridges.start(backend.send(body))
    try:
        while (question := await bridge.next()) is not None:
            key, request = question
            if request["method"] == "roots/list" and not ctx.has_capability("roots"):
                bridge.answer(key, {"roots": []})  # nobody to ask: no roots (ROOT-05 copes)
                continue
            try:
                [answer] = await backend.ask(passthrough(f"b.{key}", request))
            except InputRequired:
                state[_PARKED] = bridges.park(bridge)
                raise
            bridge.answer(key, answer)
        return bridge.call.result()
    except BaseException:
        if bridge.id not in bridges.parked:
            bridge.cancel()
        raise


async def _follow(backend: _Backend, created: dict[str, Any]) -> dict[str, Any]:
    """The backend made the call a task: so does the gateway, and follows it to its end. A
    backend task that ends `cancelled` ends the front's task `cancelled` too: the status is
    the task's outcome (`completed` would say the work finished), not a result to word
    (the tasks extension: "cancelled before completion"; TASK-10, TASK-17)."""
    client, ctx = backend.client, backend.ctx

    async def send(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await client.request(method, params, raw=True, use_cache=False)

    async def fulfil(requests: dict[str, Any]) -> dict[str, Any]:
        answers = await backend.ask(*(passthrough(k, r) for k, r in requests.items()))
        return dict(zip(requests, answers, strict=True))

    message = created.get("statusMessage")
    as_task = await ctx.run_as_task(message if isinstance(message, str) else None)
    try:
        return await follow_task(created, send, fulfil)
    except ConnectFailed as exc:  # gone between two polls: the task's outcome is unknown
        raise ConnectionClosed(str(exc)) from exc
    except TaskCancelled:
        if as_task:  # the front's task settles `cancelled` when its handler ends cancelled
            raise asyncio.CancelledError from None
        raise  # a call that could not become a task (a 2025-11-25 front): `call_failure`


def own_result(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """A backend result as the gateway's: the backend's protocol `_meta` (its serverInfo, its
    subscription ids) stays behind; the gateway adds its own; what the front's era requires
    is there (`completed`: a 2025-11-25 backend sends no `resultType`). (The result was decoded
    for this call alone: it is changed in place.)"""
    completed(method, result)
    meta = result.get("_meta")
    if isinstance(meta, dict) and any(k.startswith(_MCP_META) for k in meta):
        kept = {k: v for k, v in meta.items() if not k.startswith(_MCP_META)}
        if kept:
            result["_meta"] = kept
        else:
            del result["_meta"]
    return result


def failed(ctx: Context, message: str) -> dict[str, Any]:
    """A call whose outcome the gateway does not know: a tool error for the model, or, when
    it carries an idempotency key, a JSON-RPC error, which frees the key: the caller's retry
    with it goes on to the backend (which knows the key) instead of replaying this answer."""
    if IDEMPOTENCY_KEY in ctx.meta.raw:
        raise InternalError(message)
    return error_result(message)


async def forwarded(
    link: UpstreamLink, method: str, params: dict[str, Any], ctx: Context
) -> dict[str, Any]:
    """A prompt or a read on its backend; a backend that cannot answer is a protocol error
    (there is no tool result to carry it)."""
    try:
        result = await forward(link, method, params, ctx)
    except BackendLost as exc:
        raise exc.error from None
    except Unavailable:
        raise InternalError(f"The {link.name!r} server is unavailable right now") from None
    except RequestTimeout as exc:
        link.report(exc)
        raise InternalError(f"The {link.name!r} server did not answer in time") from None
    except ClientError as exc:
        link.report(exc)
        raise InternalError(f"The connection to the {link.name!r} server broke") from None
    link.healthy()
    return own_result(method, result)
