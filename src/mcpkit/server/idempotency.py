"""Idempotency keys for `tools/call` (the `dev.mcpkit/idempotency` extension, see
`mcpkit.protocol.idempotency`): a keyed call runs its tool at most once.

    server = Server("shop", idempotency=MemoryIdempotencyStore(ttl_seconds=86400))

A call whose `_meta` carries `dev.mcpkit/idempotencyKey` is recorded under (caller, tool, key),
where the caller is the verified principal of the request (never an argument), with a digest of
its arguments. Once admitted it runs detached from its request (`server.detached`): a client
that disconnects does not stop it, and its outcome stays bound to the key. A repeat within the
TTL gets that result (marked as a replay) without running the tool; a repeat while it still
runs waits for it; a repeat with different arguments is refused (-32602). A call that ends
without an outcome (explicitly cancelled, stopped by a drain, its instance gone and its lease
lapsed) leaves "outcome unknown": repeats get `OutcomeUnknown` naming the key, never a free
key. Only an `input_required` answer (the MRTR retry carries the same key and runs the tool)
or a JSON-RPC error (nothing was done) frees the key. Calls without a key see no change.

Stores: `MemoryIdempotencyStore` (one process; its promise ends with the process) and
`RedisIdempotencyStore` (`mcpkit.server.redis_idempotency`, shared by instances).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from ..protocol.errors import InvalidParams, MCPError
from ..protocol.idempotency import IDEMPOTENCY_KEY, IDEMPOTENT_REPLAY, MAX_KEY_LENGTH, valid_key
from .admission import CANCEL_REQUESTED, ServerRequest
from .auth.access import current_access, require_scopes
from .detached import DetachedCalls

if TYPE_CHECKING:
    from .context import Emit
    from .methods import Handler
    from .server import Server

__all__ = [
    "DetachedCalls",
    "IdempotencyStore",
    "KeyReused",
    "MemoryIdempotencyStore",
    "OutcomeUnknown",
    "guard",
    "record_id",
]

log = logging.getLogger("mcpkit.server")
DEFAULT_TTL = 86400.0
DEFAULT_MAX_RUNNING = 1000
DEFAULT_MAX_RUNNING_PER_CALLER = 100
OUTCOME_UNKNOWN = -31100  # an application code (BASE-23)


class KeyReused(InvalidParams):
    """-32602: the key was first used for a call with other arguments."""

    def __init__(self) -> None:
        super().__init__(
            f"Invalid params: this {IDEMPOTENCY_KEY} was already used with other arguments "
            "(use a new key for a new call)"
        )


class OutcomeUnknown(MCPError):
    """The call first made with this key ended without an outcome to replay (cancelled,
    stopped, or its instance went away): it may or may not have taken effect. `data` names
    the key; a store raises it with `key=None` and the guard names the key."""

    code = OUTCOME_UNKNOWN
    default_message = "Outcome unknown"

    def __init__(self, key: str | None = None) -> None:
        self.key = key
        super().__init__(
            f"Outcome unknown: the call made with {IDEMPOTENCY_KEY} {key!r} was stopped before "
            "it finished and may or may not have taken effect; check its effect before "
            "retrying with a new key",
            {"idempotencyKey": key},
        )


class IdempotencyStore(Protocol):
    """Where idempotency records live. A record is `running` (owned by the call that claimed
    it), `done` (holds the encoded result) or `unknown` (the call ended without an outcome)
    until `ttl_seconds` after it ended. `max_running` and `max_running_per_caller` cap the
    keyed calls running at once in one server (`server.detached`)."""

    ttl_seconds: float
    max_running: int
    max_running_per_caller: int

    async def claim(self, record: str, digest: str) -> bytes | None:
        """None: the caller now owns the record and must `complete`, `release` or `abandon`
        it. Bytes: the stored result. Waits while another call owns it; raises `KeyReused` on
        another digest, `OutcomeUnknown` when the record is unknown (or its owner is gone)."""
        ...

    async def complete(self, record: str, digest: str, result: bytes) -> None:
        """Keep the owner's result for `ttl_seconds`; wake the calls waiting for it."""
        ...

    async def release(self, record: str) -> None:
        """The owner produced nothing to keep and did nothing: the key is free again."""
        ...

    async def abandon(self, record: str, digest: str) -> None:
        """The owner's call was stopped midway: repeats get `OutcomeUnknown` for `ttl_seconds`."""
        ...


def record_id(principal: str | None, tool: str, key: str) -> str:
    """Records are scoped per caller and tool: one caller's key never meets another's."""
    return hashlib.sha256(orjson.dumps([principal, tool, key])).hexdigest()


def argument_digest(arguments: dict[str, Any]) -> str:
    return hashlib.sha256(orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)).hexdigest()


def settings(store: IdempotencyStore) -> dict[str, Any]:
    """What `capabilities.extensions["dev.mcpkit/idempotency"]` says (VER-07)."""
    ttl = store.ttl_seconds
    return {"ttlSeconds": int(ttl) if float(ttl).is_integer() else ttl}


def guard(store: IdempotencyStore, inner: Handler, calls: DetachedCalls) -> Handler:
    """The `tools/call` handler with idempotency keys honoured around `inner`; keyed calls
    run in `calls`, detached from their request."""

    async def tools_call(server: Server, request: ServerRequest) -> Any:
        params = request.params
        extra = params.get("_meta")
        key = extra.get(IDEMPOTENCY_KEY) if type(extra) is dict else None
        if key is None:
            return await inner(server, request)
        if not valid_key(key):
            raise InvalidParams(
                f'Invalid params: "_meta.{IDEMPOTENCY_KEY}" must be a string of 1 to '
                f"{MAX_KEY_LENGTH} characters"
            )
        name, arguments = params.get("name"), params.get("arguments")
        if arguments is None:
            arguments = {}  # as tools/call reads it
        tool = server.tools.get(name) if type(name) is str else None
        if tool is None or type(arguments) is not dict:
            return await inner(server, request)  # its usual -32602
        if tool.scopes:
            require_scopes(tool.scopes)  # a replay is no way around the tool's scopes
        access = current_access.get()
        caller = access.principal if access is not None else None
        record = record_id(caller, tool.name, key)
        digest = argument_digest(arguments)
        try:
            stored = await store.claim(record, digest)
        except OutcomeUnknown:
            raise OutcomeUnknown(key) from None
        if stored is not None:
            return _replayed(stored)
        gate = _Gate(request.emit)
        detached = _detached(request, gate)
        try:
            call = calls.start(
                caller, lambda: _outcome(store, record, digest, inner, server, detached)
            )
        except BaseException:
            await asyncio.shield(_quietly(store.release(record)))  # it never ran
            raise
        try:
            return await asyncio.shield(call)
        except asyncio.CancelledError as cancelled:
            if call.cancelled() and not _cancelling():
                raise OutcomeUnknown(key) from None  # stopped under a waiting request
            gate.open = False  # TR-HTTP-24: nothing more on the request's stream
            if cancelled.args[:1] == (CANCEL_REQUESTED,):
                call.cancel(CANCEL_REQUESTED)  # asked for: stop the work (outcome unknown)
            raise  # else a disconnect: the call goes on to its outcome (CANC-11)

    return tools_call


async def _outcome(
    store: IdempotencyStore,
    record: str,
    digest: str,
    inner: Handler,
    server: Server,
    request: ServerRequest,
) -> Any:
    """The detached call: the tool's outcome, recorded under the key whatever became of the
    request."""
    try:
        result = await inner(server, request)
    except asyncio.CancelledError:  # stopped midway: it may have had its effect
        await asyncio.shield(_quietly(store.abandon(record, digest)))
        raise
    except BaseException:  # a JSON-RPC error: the tool refused or failed before acting
        await asyncio.shield(_quietly(store.release(record)))
        raise
    if isinstance(result, dict) and result.get("resultType") == "input_required":
        await _quietly(store.release(record))  # MRTR: the retry carries the key, runs the tool
    else:
        await _quietly(store.complete(record, digest, orjson.dumps(result)))
    return result


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class _Gate:
    """The request's notifications, passed on while someone listens for them."""

    __slots__ = ("emit", "open")

    def __init__(self, emit: Emit | None) -> None:
        self.emit = emit
        self.open = True

    async def __call__(self, method: str, params: dict[str, Any]) -> None:
        if self.open and self.emit is not None:
            await self.emit(method, params)


def _detached(request: ServerRequest, gate: _Gate) -> ServerRequest:
    emit = gate if request.emit is not None else None
    return ServerRequest(
        request.id,
        request.method,
        request.params,
        request.meta,
        request.era,
        emit,
        request.outbox,
        request.channel,
    )


async def _quietly(step: Awaitable[None]) -> None:
    """The tool has run (or failed): its answer goes out even if the store cannot record it."""
    try:
        await step
    except Exception:
        log.warning("idempotency store: cannot record a result", exc_info=True)


def _replayed(stored: bytes) -> dict[str, Any]:
    result: dict[str, Any] = orjson.loads(stored)
    meta = result.get("_meta")
    result["_meta"] = {**(meta if isinstance(meta, dict) else {}), IDEMPOTENT_REPLAY: True}
    return result


_UNKNOWN = b""  # a record's result when its call ended without one (no result encodes empty)


@dataclass(slots=True)
class _Record:
    digest: str
    result: bytes | None = None  # None while running; _UNKNOWN when stopped midway
    finished: asyncio.Future[None] | None = None  # made when a repeat has to wait
    expires: float = math.inf


class MemoryIdempotencyStore:
    """Records in this process: for one server process (stdio, or one HTTP instance). Its
    promise ends with the process: a restarted process knows no key (use
    `RedisIdempotencyStore`, with persistence on, where keys must outlive a restart).

    `max_records` bounds memory: past it, the oldest completed records go first."""

    def __init__(
        self,
        ttl_seconds: float = DEFAULT_TTL,
        *,
        max_records: int = 100_000,
        max_running: int = DEFAULT_MAX_RUNNING,
        max_running_per_caller: int = DEFAULT_MAX_RUNNING_PER_CALLER,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        self.ttl_seconds = ttl_seconds
        self.max_records = max_records
        self.max_running = max_running
        self.max_running_per_caller = max_running_per_caller
        self._clock = clock
        self._records: dict[str, _Record] = {}
        self._expiry: deque[tuple[float, str]] = deque()  # completion order = expiry order

    def __len__(self) -> int:
        return len(self._records)

    async def claim(self, record: str, digest: str) -> bytes | None:
        while True:
            self._sweep()
            found = self._records.get(record)
            if found is None:
                self._records[record] = _Record(digest)
                return None
            if found.digest != digest:
                raise KeyReused()
            if found.result is not None:
                if found.result == _UNKNOWN:
                    raise OutcomeUnknown()
                return found.result
            if found.finished is None:
                found.finished = asyncio.get_running_loop().create_future()
            await asyncio.shield(found.finished)  # the first call runs: wait, then look again

    async def complete(self, record: str, digest: str, result: bytes) -> None:
        self._end(record, result)

    async def abandon(self, record: str, digest: str) -> None:
        self._end(record, _UNKNOWN)

    def _end(self, record: str, result: bytes) -> None:
        found = self._records.get(record)
        if found is None or found.result is not None:
            return
        found.result = result
        found.expires = self._clock() + self.ttl_seconds
        self._expiry.append((found.expires, record))
        _wake(found.finished)
        while len(self._records) > self.max_records and self._expiry:
            self._drop(*self._expiry.popleft())

    async def release(self, record: str) -> None:
        found = self._records.get(record)
        if found is not None and found.result is None:
            del self._records[record]
            _wake(found.finished)

    def _sweep(self) -> None:
        now = self._clock()
        while self._expiry and self._expiry[0][0] <= now:
            self._drop(*self._expiry.popleft())

    def _drop(self, expires: float, record: str) -> None:
        found = self._records.get(record)
        if found is not None and found.expires == expires:
            del self._records[record]


def _wake(finished: asyncio.Future[None] | None) -> None:
    if finished is not None and not finished.done():
        finished.set_result(None)
