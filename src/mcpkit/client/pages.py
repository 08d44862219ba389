"""Lists across pages (PAG-*): one page read from a result, and the one loop that follows
`nextCursor`, shared by `ClientSession` and `Client`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..protocol.jsonrpc import JSONObject
from .errors import InvalidResponse

__all__ = ["MAX_PAGES", "Page", "collect", "read_page"]

#: A list longer than this many pages is taken for a server that never stops.
MAX_PAGES = 10_000
#: The items of one page, and the cursor of the next (None: the last page).
Page = tuple[list[JSONObject], str | None]


def read_page(method: str, key: str, result: JSONObject) -> Page:
    """The `key` items of a list result (objects only) and its `nextCursor`, which is opaque:
    any string, the empty one included (PAG-05)."""
    items = result.get(key)
    if not isinstance(items, list):
        raise InvalidResponse(f"{method} result has no {key!r} list")
    cursor = result.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        raise InvalidResponse(f"{method} returned a cursor that is not a string: {cursor!r}")
    return [item for item in items if isinstance(item, dict)], cursor


async def collect(method: str, fetch: Callable[[str | None], Awaitable[Page]]) -> list[JSONObject]:
    """Every item of a list: `fetch(cursor)` page after page until one has no cursor. A cursor
    that comes back, or more than `MAX_PAGES` pages, is an `InvalidResponse`."""
    items, cursor = await fetch(None)
    seen: set[str] = set()
    while cursor is not None:
        if cursor in seen:
            raise InvalidResponse(f"{method} returned a bad or repeated cursor {cursor!r}")
        if len(seen) >= MAX_PAGES:
            raise InvalidResponse(f"{method} returned more than {MAX_PAGES} pages")
        seen.add(cursor)
        page, cursor = await fetch(cursor)
        items += page
    return items
