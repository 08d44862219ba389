"""Serves the recorded tool catalogues of real servers (tests/data/tool_catalogues) over stdio:
`python catalogue_server.py NAME`. Every tool answers with its name and arguments, so a test
can see which tool a model's call reached."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcpkit import Server
from mcpkit.server.tools import Tool

DATA = Path(__file__).resolve().parent.parent / "data/tool_catalogues"


def catalogue_server(name: str) -> Server:
    data = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    server = Server(name, version=data["version"])
    for tool in data["tools"]:

        def answer(_name: str = tool["name"], **arguments: Any) -> str:
            return json.dumps({"tool": _name, "arguments": arguments})

        server.add_tool(
            Tool(
                answer,
                name=tool["name"],
                title=tool.get("title"),
                description=tool.get("description") or "",
                input_schema=tool.get("inputSchema") or {"type": "object"},
            )
        )
    return server


if __name__ == "__main__":
    catalogue_server(sys.argv[1]).run("stdio")
