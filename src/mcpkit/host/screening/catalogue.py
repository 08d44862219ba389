"""A catalogue's definitions screened once each: the host's (and the gateway's) view.

`DefinitionScreen.screen(server, tools, others)` gives each tool's screening (`offered`: the
definition to offer); a definition is screened again only when it changes (or the other
servers' names do), and its findings are reported once: a warning for the user (`warn`, the
terminal's or the web UI's) when they hold it or hidden characters were removed, the log
always."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import Finding, Reading, Screening, read_definition, same_tool
from .confusables import skeleton

log = logging.getLogger("mcpkit.host.screening")
#: The one "server" of names given as a plain list: never the server screened.
_ANY = "\0others"


class OtherNames:
    """Every server's tool names (plain, and as the model's aliases), indexed once per
    catalogue: which servers use each name, and the names by how they look (`skeleton`). A
    definition's screening depends only on the other servers' names it has as words or looks
    like (`near`), so it is found without reading every name, and it is screened again only
    when those change."""

    def __init__(self, by_server: Mapping[str, Iterable[str]]) -> None:
        self._users: dict[str, set[str]] = {}
        for server, names in by_server.items():
            for name in names:
                self._users.setdefault(name, set()).add(server)
        self._alike: dict[str, list[str]] = {}
        for name in self._users:
            self._alike.setdefault(skeleton(name), []).append(name)

    def near(
        self, server: str, own: Sequence[str], words: frozenset[str], look: str
    ) -> tuple[str, ...]:
        """The names of *other* servers' tools (not `server`'s own, nor the end of one of
        them: `same_tool`) among `words` or looking like `look`, sorted."""
        found = {w for w in words if self._other(w, server)}
        found.update(n for n in self._alike.get(look, ()) if self._other(n, server))
        mine = set(own)
        return tuple(
            sorted(n for n in found if n not in mine and not any(same_tool(n, m) for m in own))
        )

    def _other(self, name: str, server: str) -> bool:
        users = self._users.get(name)
        return users is not None and (len(users) > 1 or server not in users)


@dataclass(slots=True)
class _Seen:
    """A definition read once, and its last screening (against `near`)."""

    reading: Reading
    words: frozenset[str]
    look: str
    near: tuple[str, ...] | None = None
    screening: Screening | None = None


class DefinitionScreen:
    def __init__(self, warn: Callable[[str], None]) -> None:
        self.warn = warn
        self._seen: dict[tuple[str, str], _Seen] = {}
        self._reported: set[tuple[str, str, tuple[Finding, ...]]] = set()
        #: How many definitions were screened (not taken from the last screening).
        self.screened = 0

    def screen(
        self, server: str, tools: Iterable[dict[str, Any]], others: Iterable[str] | OtherNames
    ) -> list[Screening]:
        """Each tool's screening, in order. `others`: the other servers' tool names (plain and
        as aliases), or every server's (`OtherNames`, built once for a whole catalogue); the
        server's own names are never "another server's"."""
        tools = list(tools)
        own = [str(t.get("name")) for t in tools]
        index = others if isinstance(others, OtherNames) else OtherNames({_ANY: others})
        return [self._one(server, raw, own, index) for raw in tools]

    def _one(
        self, server: str, raw: dict[str, Any], own: list[str], index: OtherNames
    ) -> Screening:
        name = str(raw.get("name"))
        seen = self._seen.get((server, name))
        if seen is None or seen.reading.raw != raw:
            reading = read_definition(raw)
            seen = _Seen(reading, reading.words(), skeleton(reading.name))
            self._seen[(server, name)] = seen
        near = index.near(server, own, seen.words, seen.look)
        if seen.screening is not None and seen.near == near:
            return seen.screening
        screening = seen.reading.screen(others=near, own=own)
        seen.near, seen.screening = near, screening
        self.screened += 1
        said = (server, name, screening.findings)
        if screening.findings and said not in self._reported:
            self._reported.add(said)
            self._report(server, name, screening)
        return screening

    def _report(self, server: str, tool: str, screening: Screening) -> None:
        found = "; ".join(str(f) for f in screening.findings[:3])
        if screening.reason is None and not screening.hidden:
            log.info("tool %r of server %r: %s", tool, server, found)
            return
        log.warning("tool %r of server %r: %s", tool, server, found)
        removed = " (hidden characters removed before the model reads it)"
        self.warn(
            f"tool {tool!r} of server {server!r} needs a look: {found}"
            f"{removed if screening.hidden else ''}"
        )
