"""Where the host keeps its state by default: `$XDG_STATE_HOME/mcpkit/` (else
`~/.local/state/mcpkit/`). Tool pins live here, not in a cache directory: clearing a cache
must never silently re-pin a changed tool. What can be computed again (tool-search vectors)
lives in `$XDG_CACHE_HOME/mcpkit/` (else `~/.cache/mcpkit/`)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def state_path(name: str) -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local/state")
    return Path(base) / "mcpkit" / name


def cache_path(name: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mcpkit" / name


def write_atomic(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all: readers (other hosts, `mcpkit pins`) never see half
    a file, and two writers never share a temporary file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
