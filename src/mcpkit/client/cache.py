"""A client cache honouring `ttlMs` / `cacheScope` (CACHE-*).

Keys are (scope key, method, params without `_meta`); `private` entries also carry the
credentials in use, so another token never sees them (CACHE-11). Change notifications make
entries stale at once (CACHE-14). MRTR results and retries are never stored (CACHE-04).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import orjson

#: Which list a change notification invalidates.
INVALIDATES = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}
CACHEABLE = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)


class ResultCache:
    def __init__(
        self, max_entries: int = 1024, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._entries: dict[tuple[str, str, bytes], tuple[float, Any]] = {}
        self.max_entries = max_entries
        self.clock = clock

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def _key(method: str, params: dict[str, Any], auth: str) -> tuple[str, str, bytes]:
        salient = {k: v for k, v in params.items() if k != "_meta"}
        return (auth, method, orjson.dumps(salient, option=orjson.OPT_SORT_KEYS))

    def get(self, method: str, params: dict[str, Any], auth: str) -> Any:
        if method not in CACHEABLE:
            return None
        for scope in ("", auth):  # public entries first, then this credential's private ones
            entry = self._entries.get(self._key(method, params, scope))
            if entry is not None:
                expires, result = entry
                if self.clock() < expires:  # CACHE-07
                    return result
        return None

    def put(self, method: str, params: dict[str, Any], auth: str, result: dict[str, Any]) -> None:
        if method not in CACHEABLE or "inputResponses" in params or "requestState" in params:
            return  # CACHE-04
        if result.get("resultType", "complete") != "complete":
            return
        ttl = result.get("ttlMs")
        if not isinstance(ttl, int) or ttl <= 0:  # CACHE-06: absent, zero or negative → stale
            return
        scope = "" if result.get("cacheScope") == "public" else auth
        if len(self._entries) >= self.max_entries:
            self._entries.pop(next(iter(self._entries)))
        self._entries[self._key(method, params, scope)] = (self.clock() + ttl / 1000.0, result)

    def invalidate(self, notification: str, uri: str | None = None) -> None:
        if notification == "notifications/resources/updated" and uri is not None:
            self._entries = {
                k: v
                for k, v in self._entries.items()
                if not (k[1] == "resources/read" and uri.encode() in k[2])
            }
            return
        methods = INVALIDATES.get(notification)
        if methods:
            self._entries = {k: v for k, v in self._entries.items() if k[1] not in methods}

    def clear(self) -> None:
        self._entries.clear()
