"""Quarantine: what the user and the model are told about tools the pins withhold (`host.pins`
decides), and how the questions are grouped: a server seen for the first time is one question
for its whole catalogue, anything else one question per tool.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .pins import PinChange


def held_warnings(server: str, fresh: list[PinChange], *, first: bool) -> list[str]:
    """The user's warnings for newly withheld tools: one line for a new server's catalogue."""
    if first and fresh and all(c.new for c in fresh):
        return [
            f"server {server!r} is new: its {_tools(len(fresh))} are withheld until you approve "
            f'them (mcpkit pins approve {server}, or trust it: "trustNewTools": true)'
        ]
    out = []
    for c in fresh:
        what = (
            f"offers a new tool {c.tool!r}"
            if c.new
            else f"changed the definition of tool {c.tool!r} since it was pinned"
        )
        held = f" (held for review: {c.reason})" if c.reason else ""
        out.append(
            f"server {server!r} {what}{held}; it is withheld until you approve it "
            f"(mcpkit pins diff {server})"
        )
    return out


def model_note(withheld: Iterable[PinChange]) -> str | None:
    """The model's one note on everything withheld: counts per server, and the names of
    changed tools only (a new tool's name is the server's text, never approved)."""
    parts: list[str] = []
    by_server: dict[str, list[PinChange]] = {}
    for change in withheld:
        by_server.setdefault(change.server, []).append(change)
    for server, changes in by_server.items():
        new = sum(c.new for c in changes)
        if new:
            parts.append(f"{_tools(new)} new on the {server!r} server")
        parts += [f"{c.tool!r} of the {server!r} server (changed)" for c in changes if not c.new]
    if not parts:
        return None
    return (
        "Some tools await the user's approval and are not offered until approved: "
        + "; ".join(parts)
        + ". Do not try to call them; tell the user if the task needs them."
    )


def batches(changes: list[PinChange], approved: Callable[[str], bool]) -> list[list[PinChange]]:
    """The questions to ask: a first-sight server's whole catalogue at once (no tool of it
    was ever approved), else each change on its own."""
    out: list[list[PinChange]] = []
    whole: dict[str, list[PinChange]] = {}
    for change in changes:
        if change.new and not approved(change.server):
            if change.server not in whole:
                whole[change.server] = []
                out.append(whole[change.server])
            whole[change.server].append(change)
        else:
            out.append([change])
    return out


def summary(changes: list[PinChange]) -> list[str]:
    """One line per tool of a batch: its name, the first line of its description, and why
    it is held for review when it is."""
    lines = []
    for c in changes:
        text = str(c.current.get("description") or c.current.get("title") or "").strip()
        first = text.splitlines()[0][:120] if text else ""
        held = f" [held for review: {c.reason}]" if c.reason else ""
        lines.append(f"{c.tool}: {first}{held}")
    return lines


def _tools(n: int) -> str:
    return f"{n} tool{'' if n == 1 else 's'}"
