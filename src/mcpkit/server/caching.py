"""Caching hints (CACHE-*) and list pagination cursors (PAG-*)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Literal

from ..protocol.errors import InvalidParams

CacheScope = Literal["public", "private"]


@dataclass(frozen=True, slots=True)
class CacheHint:
    """`ttlMs` (integer ≥ 0, CACHE-05) and `cacheScope` for one kind of result."""

    ttl_ms: int = 0
    scope: CacheScope = "private"

    def __post_init__(self) -> None:
        if not isinstance(self.ttl_ms, int) or self.ttl_ms < 0:
            raise ValueError("ttl_ms must be an integer >= 0")
        if self.scope not in ("public", "private"):
            raise ValueError("scope must be 'public' or 'private'")


#: Lists are the same for every caller unless authorization filters them (then: private).
DEFAULT_CACHE: dict[str, CacheHint] = {
    "server/discover": CacheHint(60_000, "public"),
    "tools/list": CacheHint(60_000, "public"),
    "prompts/list": CacheHint(60_000, "public"),
    "resources/list": CacheHint(60_000, "public"),
    "resources/templates/list": CacheHint(60_000, "public"),
    "resources/read": CacheHint(0, "private"),
}
CACHEABLE = frozenset(DEFAULT_CACHE)


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"mcpkit:{offset}".encode()).decode().rstrip("=")


def decode_cursor(cursor: object, length: int) -> int:
    """Offset of an opaque cursor; -32602 for anything we did not hand out (PAG-06)."""
    if not isinstance(cursor, str):
        raise InvalidParams('Invalid params: "cursor" must be a string')
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        prefix, _, num = raw.partition(":")
        offset = int(num)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InvalidParams("Invalid params: unknown cursor") from None
    if prefix != "mcpkit" or not 0 < offset <= length:
        raise InvalidParams("Invalid params: unknown or expired cursor")
    return offset
