"""Routing what servers send besides results: progress to its call, logs, change notices."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..protocol.jsonrpc import JSONObject, Notification
from ..protocol.meta import LOG_LEVEL_RANK
from .cache import ResultCache
from .errors import ClientError

log = logging.getLogger("mcpkit.client")

ProgressCallback = Callable[[float, float | None, str | None], Any]
LogCallback = Callable[[str, Any, str | None], Any]


def check_log_level(level: str | None) -> str | None:
    """A level a caller asked for: one of the syslog names (LOG-02), or None."""
    if level is not None and level not in LOG_LEVEL_RANK:
        raise ValueError(f"log_level must be one of {', '.join(LOG_LEVEL_RANK)}")
    return level


def no_notifications(method: str, kind: str) -> ClientError:
    """A progress callback given to a transport that declares no notifications."""
    return ClientError(
        f"{method}: progress needs notifications, and this {kind} transport declares none "
        f"(capabilities.notifications)"
    )


@dataclass(eq=False)
class NotificationRouter:
    """Called for every notification a transport receives outside a listen stream."""

    cache: ResultCache | None
    on_log: LogCallback | None
    user: Callable[[Notification], Any] | None
    #: Sees each notification as received (`Client(trace=...)`).
    trace: Callable[[str, dict[str, Any]], None] | None = None
    #: progressToken → the callback of the call in flight that carries it
    progress: dict[str, ProgressCallback] = field(default_factory=dict, init=False)
    _tokens: Iterator[int] = field(
        default_factory=lambda: itertools.count(1), init=False, repr=False
    )

    def watch(self, body: JSONObject, progress: ProgressCallback) -> str:
        """Ask for progress in the request's `_meta`; its notifications go to `progress`
        until the caller pops the token returned."""
        token = f"mcpkit-{next(self._tokens)}"
        self.progress[token] = progress
        body["_meta"] = {**(body.get("_meta") or {}), "progressToken": token}
        return token

    def invalidate(self, note: Notification) -> None:
        """A change notification makes cached entries stale at once (CACHE-14)."""
        if self.cache is not None:
            uri = (note.params or {}).get("uri")
            self.cache.invalidate(note.method, uri if isinstance(uri, str) else None)

    async def __call__(self, note: Notification) -> None:
        if self.trace is not None:
            self.trace("recv", {"jsonrpc": "2.0", "method": note.method, "params": note.params})
        params = note.params or {}
        if note.method == "notifications/progress":
            callback = self.progress.get(str(params.get("progressToken")))
            if callback is not None:
                await _maybe(
                    callback(params.get("progress", 0), params.get("total"), params.get("message"))
                )
            return
        if note.method == "notifications/message":
            if self.on_log is not None:
                await _maybe(
                    self.on_log(str(params.get("level")), params.get("data"), params.get("logger"))
                )
            else:
                log.info("server log [%s]: %s", params.get("level"), params.get("data"))
            return
        self.invalidate(note)
        if self.user is not None:
            await _maybe(self.user(note))


async def _maybe(value: Any) -> None:
    if asyncio.iscoroutine(value):
        await value
