"""A gateway backend started on first use (`"start": "lazy"`), stopped when idle
(`idleTimeout`): the host's `LazyLink` (one start for every caller meanwhile, the idle timer,
the record saved at each start) over the gateway's `UpstreamLink` (the whole catalogue).

While it is not running, the front mirrors its catalogue from the record of its last start
(`host/records.py`): tools (through the pins and the content checks, as listed ones), resources,
templates, prompts, instructions and capabilities, with the record's caching hint (a stale
record's lists say `ttlMs: 0`: CACHE-07). The first call, prompt or read starts it; a stop for
idleness keeps the catalogue offered.
"""

from __future__ import annotations

from typing import Any

from ..host.lazy import LazyLink
from ..host.records import LISTS, Record
from ..server.caching import CacheHint
from .link import Catalog, UpstreamLink


class LazyBackend(LazyLink, UpstreamLink):
    """An `UpstreamLink` that starts on its first use and is offered from its record."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._keeping = False

    def _offer(self, tools: list[Any]) -> None:
        """The record's catalogue (`LazyLink.start`, before the front hears of the link): its
        tools reviewed as listed ones are, and the rest of what the record holds."""
        self._review([tool.raw for tool in tools])
        if self.record is not None:
            self._from_record(self.record)

    def _from_record(self, record: Record) -> None:
        now = self.store.clock() if self.store is not None else record.saved
        left = max(0, int((record.saved + record.ttl_ms / 1000.0 - now) * 1000))
        hint = CacheHint(left, "public" if record.scope == "public" else "private")
        tools = self.catalog.tools
        self.catalog = Catalog(
            tools=tools,
            resources=list(record.lists.get("resources", [])),
            templates=list(record.lists.get("resourceTemplates", [])),
            prompts=list(record.lists.get("prompts", [])),
            hints={method: hint for method, key, _ in LISTS if key in record.lists},
        )
        self.capabilities = dict(record.capabilities)
        self.instructions = record.instructions

    async def _stop(self, why: str) -> None:
        """Stopped for idleness: the catalogue stays offered (the front is not told of a
        change), and the next use starts the backend again."""
        self._keeping = True
        try:
            await super()._stop(why)
        finally:
            self._keeping = False

    async def _drop(self) -> None:
        kept = self.catalog, self.capabilities, self.instructions
        await super()._drop()
        if self._keeping:
            self.catalog, self.capabilities, self.instructions = kept

    async def _noticed(self, method: str, params: dict[str, Any]) -> None:
        """A list changed (CACHE-14): listed again, and the record renewed with it."""
        await super()._noticed(method, params)
        if method.endswith("/list_changed") and self.up:
            await self._save()
