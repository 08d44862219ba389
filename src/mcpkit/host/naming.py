"""Collision-free tool names for the model: `{server}__{tool}` (TOOL-14).

The prefix comes from the config key (or its `alias`), never from `serverInfo`. Characters
outside `[A-Za-z0-9_-]` become `_`. Model APIs take at most 64 characters, so a longer name
first gives up characters of its server prefix (down to `MIN_PREFIX`), keeping the tool's own
name whole: the model tells tools apart by what they do, not by a hash. Only when the tool name
alone does not fit, or two names would still be equal, does a short hash end the name. The
reverse map strips the prefix before `tools/call`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping

MAX_LEN = 64
MIN_PREFIX = 8  # shortest server prefix kept before the tool name itself is cut
_BAD = re.compile(r"[^A-Za-z0-9_-]")


def _digest(server: str, tool: str) -> str:
    return hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:6]


def _hashed(name: str, server: str, tool: str) -> str:
    return f"{name[: MAX_LEN - 7]}_{_digest(server, tool)}"


def alias_for(server: str, tool: str, prefix: str | None = None) -> str:
    """The model's name for `tool` of `server` (`prefix`: the server's configured alias)."""
    head, name = _BAD.sub("_", prefix or server), _BAD.sub("_", tool)
    if len(head) + 2 + len(name) <= MAX_LEN:
        return f"{head}__{name}"
    room = MAX_LEN - 2 - len(name)
    if room >= min(MIN_PREFIX, len(head)):
        return f"{head[:room].rstrip('_-') or head[:room]}__{name}"
    return _hashed(f"{head[:MIN_PREFIX]}__{name}", server, tool)


class ToolNames:
    """Alias ↔ (server, tool) for one catalogue."""

    def __init__(
        self, pairs: Iterable[tuple[str, str]], prefixes: Mapping[str, str] | None = None
    ) -> None:
        prefixes = prefixes or {}
        by_alias: dict[str, list[tuple[str, str]]] = {}
        for server, tool in sorted(set(pairs)):
            by_alias.setdefault(alias_for(server, tool, prefixes.get(server)), []).append(
                (server, tool)
            )
        self._forward: dict[tuple[str, str], str] = {}
        self._reverse: dict[str, tuple[str, str]] = {}
        for alias, owners in by_alias.items():
            if len(owners) == 1:
                self._add(alias, owners[0])
                continue
            for server, tool in owners:  # e.g. "a.b" and "a_b": both get a hash, in sorted order
                self._add(_hashed(alias, server, tool), (server, tool))

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
