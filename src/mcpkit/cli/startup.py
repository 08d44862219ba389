"""Starting the configured servers for a one-shot command (`mcpkit tools`), in view: a line
per server on stderr while they start (live on a terminal, plain lines in a pipe or a file),
the whole wait bounded by `host.startupTimeout`, and how each ended, failures with their
reason. stdout is left to the command's result, so `--json` stays parseable."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from ..host import Fleet
    from ..host.link import ServerLink

__all__ = ["Outcome", "start_in_view"]

Ending = Literal["ready", "failed", "late", "disabled"]
_MARKS = {"ready": "[green]✓[/]", "failed": "[red]✗[/]", "late": "[yellow]…[/]", "disabled": "-"}


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one server's start ended: `detail` is its tool count or why it is not listed."""

    server: str
    ending: Ending
    detail: str
    seconds: float

    def line(self) -> str:
        """`shipping: 3 tools (0.8 s)`, `returns: failed: ... `: plain text, one line."""
        took = f" ({self.seconds:.1f} s)" if self.ending in ("ready", "failed") else ""
        what = {"failed": "failed: ", "late": "", "ready": "", "disabled": ""}[self.ending]
        return f"{self.server}: {what}{self.detail}{took}"


class _Board:
    """Each server's line: a spinner and the time so far until it has an outcome."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.started = time.monotonic()
        self.outcomes: dict[str, Outcome] = {}

    def settle(self, link: ServerLink, timeout: float | None) -> Outcome:
        from ..host import LinkState
        from ..host.apps import for_model

        seconds = time.monotonic() - self.started
        if link.state is LinkState.DISABLED:
            outcome = Outcome(link.name, "disabled", '"disabled" in the configuration', seconds)
        elif link.up or link.idle:
            count = sum(for_model(t.raw) for t in link.tools)  # as the catalogue counts them
            detail = f"{count} tool{'' if count == 1 else 's'}"
            if link.idle:  # a lazy server, listed from its record
                detail += f" ({link.detail})"
            if link.withheld:  # held by the pins: listed after the catalogue
                detail += f", {len(link.withheld)} awaiting approval"
            outcome = Outcome(link.name, "ready", detail, seconds)
        elif link.tried:
            outcome = Outcome(link.name, "failed", link.detail or "it did not start", seconds)
        else:
            wait = f"{timeout:g} s" if timeout is not None else "the wait"
            detail = f"no answer within {wait} (host.startupTimeout); its tools are not listed"
            outcome = Outcome(link.name, "late", detail, seconds)
        self.outcomes.setdefault(link.name, outcome)
        return self.outcomes[link.name]

    def __rich__(self) -> RenderableType:
        from rich.markup import escape
        from rich.text import Text

        elapsed = time.monotonic() - self.started
        spinner = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"[int(elapsed * 10) % 10]
        lines = []
        for name in self.names:
            done = self.outcomes.get(name)
            if done is None:
                lines.append(f"[dim]{spinner} {escape(name)}: starting… {elapsed:.1f} s[/]")
            else:
                lines.append(f"{_MARKS[done.ending]} {escape(done.line())}")
        return Text.from_markup("\n".join(lines))


async def start_in_view(fleet: Fleet, timeout: float | None, console: Console) -> list[Outcome]:
    """Start `fleet`, showing each server's progress on `console` (stderr); return how each
    server's start ended, in configuration order, after `timeout` seconds at most."""
    names = list(fleet.links)
    board = _Board(names)
    live = console.is_terminal

    shown: set[str] = set()

    def show(outcome: Outcome) -> None:
        if not live and outcome.server not in shown:
            shown.add(outcome.server)
            console.print(outcome.line(), markup=False, highlight=False)

    async def watch(link: ServerLink) -> None:
        await link.settled()
        show(board.settle(link, timeout))

    if not live:
        wait = f"up to {timeout:g} s, host.startupTimeout" if timeout is not None else "no limit"
        console.print(f"starting {len(names)} server(s) ({wait})…", markup=False)
    view = _live(board, console) if live else contextlib.nullcontext()
    with view:
        watchers = [asyncio.create_task(watch(link)) for link in fleet.links.values()]
        try:
            await fleet.start(timeout, announce=False)
            await asyncio.sleep(0)  # the watchers of servers that settled last see it now
        finally:
            for task in watchers:
                task.cancel()
            await asyncio.gather(*watchers, return_exceptions=True)
        for link in fleet.links.values():  # those still starting, and any not shown yet
            show(board.settle(link, timeout))
    return [board.outcomes[name] for name in names]


def _live(board: _Board, console: Console) -> contextlib.AbstractContextManager[object]:
    from rich.live import Live

    return Live(board, console=console, refresh_per_second=10, transient=False)
