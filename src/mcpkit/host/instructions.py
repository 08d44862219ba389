"""Server `instructions` in the system prompt — for servers the config marks `trusted` only.

Instructions are text from the server that the model reads as guidance; from an untrusted
server they would be a prompt-injection channel, so they are left out."""

from __future__ import annotations

from .connections import Fleet
from .lazy import LazyLink


def trusted_instructions(fleet: Fleet) -> list[tuple[str, str]]:
    """(server, instructions) of the connected, trusted servers that sent any."""
    out = []
    for link in fleet.links.values():
        info = link.client.info if link.client is not None else None
        text = info.instructions if info is not None else None
        if info is None and isinstance(link, LazyLink) and link.record is not None:
            text = link.record.instructions  # not running: its record's
        if link.config.trusted and text:
            out.append((link.name, text.strip()))
    return out


def with_instructions(system: str | None, fleet: Fleet) -> str | None:
    parts = [system] if system else []
    for server, text in trusted_instructions(fleet):
        parts.append(f'<server-instructions server="{server}">\n{text}\n</server-instructions>')
    return "\n\n".join(parts) or None
