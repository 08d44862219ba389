"""Where a client connects: an http(s) URL or a command line to spawn. No I/O."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["HttpTarget", "StdioTarget", "Target", "is_url", "parse_target"]


@dataclass(frozen=True, slots=True)
class HttpTarget:
    """A Streamable HTTP endpoint."""

    url: str


@dataclass(frozen=True, slots=True)
class StdioTarget:
    """A server launched as a subprocess (argv, not a shell line)."""

    command: tuple[str, ...]


Target = HttpTarget | StdioTarget


def is_url(text: str) -> bool:
    """True for http:// and https:// URLs (scheme compared case-insensitively)."""
    return text[:8].lower().startswith(("http://", "https://"))


def parse_target(target: str | Sequence[str]) -> Target:
    """A URL → `HttpTarget`; a command string (split like a POSIX shell) or an argv list
    → `StdioTarget`. Raises ValueError when empty."""
    if isinstance(target, str):
        text = target.strip()
        if is_url(text):
            return HttpTarget(text)
        argv: Sequence[str] = shlex.split(text)
    else:
        argv = list(target)
        if len(argv) == 1 and is_url(argv[0].strip()):
            return HttpTarget(argv[0].strip())
    if not argv or not argv[0]:
        raise ValueError("no server given: pass an http(s) URL or a command to run")
    return StdioTarget(tuple(argv))
