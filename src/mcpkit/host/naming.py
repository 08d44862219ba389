"""Collision-free tool names for the model: `{server}__{tool}` (TOOL-14).

The prefix comes from the config key, never from `serverInfo`. Characters outside
`[A-Za-z0-9_-]` become `_`, names are capped at 64 characters with a short hash suffix, and
collisions are broken deterministically. The reverse map strips the prefix before `tools/call`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

MAX_LEN = 64
_BAD = re.compile(r"[^A-Za-z0-9_-]")


def _digest(server: str, tool: str) -> str:
    return hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:6]


def alias_for(server: str, tool: str) -> str:
    name = f"{_BAD.sub('_', server)}__{_BAD.sub('_', tool)}"
    if len(name) > MAX_LEN:
        name = f"{name[: MAX_LEN - 7]}_{_digest(server, tool)}"
    return name


class ToolNames:
    """Alias ↔ (server, tool) for one catalogue."""

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        by_alias: dict[str, list[tuple[str, str]]] = {}
        for server, tool in sorted(set(pairs)):
            by_alias.setdefault(alias_for(server, tool), []).append((server, tool))
        self._forward: dict[tuple[str, str], str] = {}
        self._reverse: dict[str, tuple[str, str]] = {}
        for alias, owners in by_alias.items():
            if len(owners) == 1:
                self._add(alias, owners[0])
                continue
            for server, tool in owners:  # e.g. "a.b" and "a_b": both get a hash, in sorted order
                base = alias[: MAX_LEN - 7]
                self._add(f"{base}_{_digest(server, tool)}", (server, tool))

    def _add(self, alias: str, owner: tuple[str, str]) -> None:
        self._forward[owner] = alias
        self._reverse[alias] = owner

    def alias(self, server: str, tool: str) -> str:
        return self._forward[(server, tool)]

    def resolve(self, alias: str) -> tuple[str, str] | None:
        """(server, original tool name) for a name the model used, or None."""
        return self._reverse.get(alias)

    def __len__(self) -> int:
        return len(self._reverse)
