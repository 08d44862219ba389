"""A server that says when it starts, for the tests of servers started on first use:
`python lazy_server.py DIR NAME` writes `DIR/NAME-<pid>` as it starts; its tool's description
is `DIR/description` when that file exists (a changed definition without a changed config)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcpkit import Server

folder, name = Path(sys.argv[1]), sys.argv[2]
(folder / f"{name}-{os.getpid()}").write_text("started\n", encoding="utf-8")
described = folder / "description"
description = described.read_text(encoding="utf-8") if described.exists() else "Echo the text."

server = Server(name, version="1.0", instructions=f"{name}: ping answers pong.")


@server.tool(description=description)
async def ping(text: str = "") -> str:
    return f"pong {text}".strip()


@server.resource("lazy://note", mime_type="text/plain")
async def note() -> str:
    """A note."""
    return f"a note from {name}"


if __name__ == "__main__":
    server.run()
