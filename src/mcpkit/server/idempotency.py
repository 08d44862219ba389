"""Idempotency keys for `tools/call` (the `dev.mcpkit/idempotency` extension, see
`mcpkit.protocol.idempotency`): a repeated call runs its tool once.

    server = Server("shop", idempotency=MemoryIdempotencyStore(ttl_seconds=86400))

A call whose `_meta` carries `dev.mcpkit/idempotencyKey` is recorded under (caller, tool, key),
where the caller is the verified principal of the request (never an argument), with a digest of
its arguments. A repeat within the TTL gets the first result (marked as a replay) without
running the tool; a repeat while the first still runs waits for it; a repeat with different
arguments is refused (-32602). Only results are kept: an `input_required` answer (the MRTR
retry carries the same key and runs the tool), a JSON-RPC error or a cancelled call frees the
key. Calls without a key take the usual path and see no change.

Stores: `MemoryIdempotencyStore` (one process) and `RedisIdempotencyStore`
(`mcpkit.server.redis_idempotency`, shared by instances).
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

from ..protocol.errors import InvalidParams
from ..protocol.idempotency import IDEMPOTENCY_KEY, IDEMPOTENT_REPLAY, MAX_KEY_LENGTH, valid_key
from .auth.access import current_access, require_scopes

if TYPE_CHECKING:
    from .admission import ServerRequest
    from .methods import Handler
    from .server import Server

__all__ = [
    "IdempotencyStore",
    "KeyReused",
    "MemoryIdempotencyStore",
    "guard",
    "record_id",
]

log = logging.getLogger("mcpkit.server")
DEFAULT_TTL = 86400.0


class KeyReused(InvalidParams):
    """-32602: the key was first used for a call with other arguments."""

    def __init__(self) -> None:
        super().__init__(
            f"Invalid params: this {IDEMPOTENCY_KEY} was already used with other arguments "
            "(use a new key for a new call)"
        )


class IdempotencyStore(Protocol):
    """Where idempotency records live. A record is `running` (owned by the call that claimed
    it) or `done` (holds the encoded result) until `ttl_seconds` after it was completed."""

    ttl_seconds: float

    async def claim(self, record: str, digest: str) -> bytes | None:
        """None: the caller now owns the record and must `complete` or `release` it. Bytes: the
        stored result. Waits while another call owns it; raises `KeyReused` on another digest."""
        ...

    async def complete(self, record: str, digest: str, result: bytes) -> None:
        """Keep the owner's result for `ttl_seconds`; wake the calls waiting for it."""
        ...

    async def release(self, record: str) -> None:
        """The owner produced no result to keep: the key is free again."""
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


def guard(store: IdempotencyStore, inner: Handler) -> Handler:
    """The `tools/call` handler with idempotency keys honoured around `inner`."""

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
        record = record_id(access.principal if access is not None else None, tool.name, key)
        digest = argument_digest(arguments)
        stored = await store.claim(record, digest)
        if stored is not None:
            return _replayed(stored)
        try:
            result = await inner(server, request)
        except BaseException:
            await asyncio.shield(_quietly(store.release(record)))
            raise
        if isinstance(result, dict) and result.get("resultType") == "input_required":
            await _quietly(store.release(record))  # MRTR: the retry carries the key, runs the tool
        else:
            await _quietly(store.complete(record, digest, orjson.dumps(result)))
        return result

    return tools_call


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


@dataclass(slots=True)
class _Record:
    digest: str
    result: bytes | None = None  # None while running
    finished: asyncio.Future[None] | None = None  # made when a repeat has to wait
    expires: float = math.inf


class MemoryIdempotencyStore:
    """Records in this process: for one server process (stdio, or one HTTP instance).

    `max_records` bounds memory: past it, the oldest completed records go first."""

    def __init__(
        self,
        ttl_seconds: float = DEFAULT_TTL,
        *,
        max_records: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        self.ttl_seconds = ttl_seconds
        self.max_records = max_records
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
                return found.result
            if found.finished is None:
                found.finished = asyncio.get_running_loop().create_future()
            await asyncio.shield(found.finished)  # the first call runs: wait, then look again

    async def complete(self, record: str, digest: str, result: bytes) -> None:
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
