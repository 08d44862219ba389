"""Middleware shipped with mcpkit: timing/log, rate limit per principal, response-size limit.

    server = Server("shop", middleware=[
        TimingLog(),                          # one log line per request, with its duration
        RateLimit(per_second=5, burst=20),    # per caller (the token's principal)
        ResponseSizeLimit(max_bytes=256_000), # a tool result above it becomes a tool error
    ])

Refusals a model can act on are tool errors (`isError: true`) on `tools/call`; on other
methods they are JSON-RPC errors.
"""

from __future__ import annotations

import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

import orjson

from ..protocol.errors import InternalError, MCPError
from .middleware import Call, CallNext
from .results import error_result

__all__ = ["RateLimit", "RateLimited", "ResponseSizeLimit", "TimingLog"]

#: Application error code of a rate-limit refusal, outside the JSON-RPC reserved range
#: -32768..-32000 (BASE-23); HTTP answers it with 429.
RATE_LIMITED = -31029


class RateLimited(MCPError):
    """Too many requests from one caller; `data.retryAfterSeconds` says when to try again."""

    code = RATE_LIMITED
    http_status = 429


class TimingLog:
    """Logs each request once it is answered: method, name, outcome and milliseconds.

    `slow_ms`: requests slower than this are logged at WARNING instead of `level`."""

    def __init__(
        self,
        logger: logging.Logger | str = "mcpkit.server.requests",
        *,
        level: int = logging.INFO,
        slow_ms: float | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.log = logging.getLogger(logger) if isinstance(logger, str) else logger
        self.level = level
        self.slow_ms = slow_ms
        self.clock = clock

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        started = self.clock()
        outcome = "error"
        try:
            result = await call_next(call)
            outcome = "tool error" if isinstance(result, dict) and result.get("isError") else "ok"
            return result
        except MCPError as exc:
            outcome = f"error {exc.code}"
            raise
        finally:
            ms = (self.clock() - started) * 1e3
            level = self.level
            if self.slow_ms is not None and ms > self.slow_ms:
                level = logging.WARNING
            name = call.name
            self.log.log(
                level,
                "%s%s %s %.1f ms",
                call.method,
                f" {name}" if name else "",
                outcome,
                ms,
                extra={"mcp_method": call.method, "mcp_name": name, "duration_ms": ms},
            )


class RateLimit:
    """A token bucket per caller: `burst` requests at once, refilled at `per_second`.

    Callers are told apart by their principal (the verified token's subject); unauthenticated
    requests share one bucket. `methods` limits which methods count (default: all). At most
    `max_callers` buckets are kept, least recently used first out."""

    def __init__(
        self,
        per_second: float,
        burst: int = 10,
        *,
        methods: Iterable[str] | None = None,
        key: Callable[[Call], str | None] | None = None,
        max_callers: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not per_second > 0 or burst < 1:
            raise ValueError("RateLimit needs per_second > 0 and burst >= 1")
        self.rate = per_second
        self.burst = burst
        self.methods = frozenset(methods) if methods is not None else None
        self.key = key if key is not None else _principal
        self.max_callers = max_callers
        self.clock = clock
        self._buckets: OrderedDict[str | None, tuple[float, float]] = OrderedDict()

    def take(self, who: str | None) -> float:
        """Spend one token of `who`'s bucket: 0.0 if allowed, else seconds until one is free."""
        now = self.clock()
        tokens, then = self._buckets.pop(who, (float(self.burst), now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        wait = 0.0
        if tokens >= 1:
            tokens -= 1
        else:
            wait = (1 - tokens) / self.rate
        self._buckets[who] = (tokens, now)
        if len(self._buckets) > self.max_callers:
            self._buckets.popitem(last=False)
        return wait

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        if self.methods is not None and call.method not in self.methods:
            return await call_next(call)
        wait = self.take(self.key(call))
        if wait == 0.0:
            return await call_next(call)
        seconds = max(1, math.ceil(wait))
        message = f"Rate limit reached: too many requests; try again in {seconds} s."
        if call.method == "tools/call":
            return error_result(message)
        raise RateLimited(message, {"retryAfterSeconds": seconds})


def _principal(call: Call) -> str | None:
    return call.principal


class ResponseSizeLimit:
    """Refuses results larger than `max_bytes` once encoded as JSON.

    A tool result over the limit becomes a tool error that tells the model to ask for less;
    any other method's becomes -32603. Measuring encodes the result once more: install it only
    where that cost is worth paying."""

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 1:
            raise ValueError("max_bytes must be >= 1")
        self.max_bytes = max_bytes

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        result = await call_next(call)
        size = len(orjson.dumps(result))
        if size <= self.max_bytes:
            return result
        if call.method == "tools/call":
            return error_result(
                f"The result of '{call.name}' was {size} bytes, over this server's limit of "
                f"{self.max_bytes}. Ask for less: narrow the query or request fewer items."
            )
        raise InternalError(
            f"Internal error: the {call.method} result was {size} bytes, over this server's "
            f"limit of {self.max_bytes}"
        )
