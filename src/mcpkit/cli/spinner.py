"""A spinner with the elapsed time while the CLI waits (a tool call, a model turn), on stderr
and only on a terminal: pipes and files get no control characters."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

__all__ = ["waiting"]


class _Elapsed:
    """Re-rendered on every refresh: `calling forecast… 2.4 s`."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.start = time.monotonic()

    def __rich__(self) -> str:
        from rich.markup import escape

        return f"[dim]{escape(self.label)}… {time.monotonic() - self.start:.1f} s[/]"


@contextlib.contextmanager
def waiting(label: str, console: Any = None) -> Iterator[None]:
    """Show `label… N.N s` with a spinner on stderr for as long as the block runs."""
    from .output import stderr_console

    console = console or stderr_console()
    if not console.is_terminal:
        yield
        return
    with console.status(_Elapsed(label), spinner="dots"):
        yield
