"""A stdio backend for the gateway's chain options (`retry`, `outputBudget`).

    python gateway_options_server.py MARKER

`flaky()` (annotated idempotent) ends the process mid-call the first time (it leaves MARKER
behind) and answers the next time; `echo(text)` answers at once; `essay()` returns 5,000
characters of text.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcpkit import Server, ToolAnnotations

MARKER = Path(sys.argv[1])
server = Server("options")


@server.tool(
    description="Fails once, then works.", annotations=ToolAnnotations(idempotent_hint=True)
)
def flaky() -> str:
    if not MARKER.exists():
        MARKER.write_text("crashed once")
        os._exit(3)
    return "ran after a restart"


@server.tool(description="Says the text back.")
def echo(text: str) -> str:
    return text


@server.tool(description="A long answer.")
def essay() -> str:
    return "word " * 1000


if __name__ == "__main__":
    server.run()
