"""A catalogue's definitions screened once each: the host's (and the gateway's) view.

`DefinitionScreen.screen(server, tools, others)` gives each tool's screening (`offered`: the
definition to offer); a definition is screened again only when it changes (or the other
servers' names do), and its findings are reported once: a warning for the user (`warn`, the
terminal's or the web UI's) when they hold it or hidden characters were removed, the log
always."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from . import Finding, Screening, screen_definition

log = logging.getLogger("mcpkit.host.screening")


class DefinitionScreen:
    def __init__(self, warn: Callable[[str], None]) -> None:
        self.warn = warn
        self._seen: dict[tuple[str, str], tuple[dict[str, Any], frozenset[str], Screening]] = {}
        self._reported: set[tuple[str, str, tuple[Finding, ...]]] = set()

    def screen(
        self, server: str, tools: Iterable[dict[str, Any]], others: Iterable[str]
    ) -> list[Screening]:
        """Each tool's screening, in order. `others`: the other servers' tool names (plain and
        as aliases); the server's own names are never "another server's"."""
        tools = list(tools)
        own = [str(t.get("name")) for t in tools]
        names = frozenset(n for n in others if n not in own)
        out: list[Screening] = []
        for raw in tools:
            name = str(raw.get("name"))
            known = self._seen.get((server, name))
            if known is not None and known[0] == raw and known[1] == names:
                out.append(known[2])
                continue
            screening = screen_definition(raw, others=names, own=own)
            self._seen[(server, name)] = (raw, names, screening)
            said = (server, name, screening.findings)
            if screening.findings and said not in self._reported:
                self._reported.add(said)
                self._report(server, name, screening)
            out.append(screening)
        return out

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
