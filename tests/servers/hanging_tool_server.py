"""A tool that never finishes: it marks the file it is given, then waits until cancelled (a
long poll, as the official PDF viewer's `poll_pdf_commands` is)."""

import asyncio
from pathlib import Path

from mcpkit import Server

server = Server("hanging", version="1.0")


@server.tool()
async def wait(marker: str) -> str:
    """Write `marker`, then wait for ever."""
    await asyncio.to_thread(Path(marker).write_text, "started")
    await asyncio.Event().wait()
    return "never"
