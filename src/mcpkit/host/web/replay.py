"""What a restored app is answered from, with no I/O: the calls an app instance made by itself
(not while the user was using it), in order, with their results. When the page is reloaded and
the app rendered again from its stored input and result, it makes the same calls again; each
one that matches the record's next call is answered from the record, so nothing runs twice
(a server that counts its calls sees them once). The first call that differs, and every call
after it, runs as usual; calls made while the user is using the app always run.

Each rendering of the app (a `view`, one per page load) keeps its own place in the record; the
first view to go past the record's end extends it. Two calls made at once keep the order they
were made in (a slot is taken when a call starts and filled when it ends).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = ["CallRecord"]

#: Calls kept per app instance, and renderings (page loads) remembered per app instance.
MAX_KEPT = 100
MAX_VIEWS = 64


@dataclass(slots=True)
class _Kept:
    name: str
    arguments: bytes
    result: dict[str, Any] | None = None


@dataclass(slots=True)
class _View:
    at: int = 0
    #: It made a call the record does not have: its calls run from then on.
    live: bool = False


@dataclass(slots=True)
class CallRecord:
    calls: list[_Kept] = field(default_factory=list)
    views: dict[str, _View] = field(default_factory=dict)

    def lookup(
        self, view: str, name: str, arguments: dict[str, Any]
    ) -> dict[str, Any] | int | None:
        """The kept result of this view's next call (a dict: answer with it, run nothing), or
        the slot to `fill` once the call has run (an int), or None (run it, keep nothing)."""
        place = self._view(view)
        if place.live:
            return None
        key = orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)
        if place.at < len(self.calls):
            kept = self.calls[place.at]
            if kept.name != name or kept.arguments != key or kept.result is None:
                place.live = True
                return None
            place.at += 1
            return kept.result
        if len(self.calls) >= MAX_KEPT:
            place.live = True
            return None
        self.calls.append(_Kept(name, key))
        place.at += 1
        return len(self.calls) - 1

    def fill(self, slot: int, result: dict[str, Any]) -> None:
        """The result of the call that took `slot`."""
        self.calls[slot].result = result

    def _view(self, view: str) -> _View:
        place = self.views.get(view)
        if place is None:
            place = self.views[view] = _View()
            while len(self.views) > MAX_VIEWS:
                del self.views[next(iter(self.views))]
        return place
