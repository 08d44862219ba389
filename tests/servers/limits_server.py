"""An HTTP server with the limits given as JSON: `python limits_server.py PORT '{"...": ...}'`."""

from __future__ import annotations

import json
import sys

from mcpkit import Server

server = Server("limits", version="1.0")


@server.tool()
async def echo(text: str) -> str:
    """Echo the text."""
    return text


if __name__ == "__main__":
    server.run("http", port=int(sys.argv[1]), **json.loads(sys.argv[2]))
