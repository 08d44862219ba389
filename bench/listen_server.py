"""mcpkit server for `listeners.py`: default settings, one tool `change` that announces a change
of the tool list to every listen stream. Served as a user serves it:

    python -m mcpkit run bench/listen_server.py --transport http --port 8000
"""

from __future__ import annotations

from mcpkit import Server

server = Server("bench-listen", version="1.0")


@server.tool()
def change() -> str:
    """Tell every listener that the tool list changed."""
    server.notify_tools_changed()
    return "changed"
