"""Serves the recorded tool catalogues of real servers (tests/data/tool_catalogues), each as its
own MCP server (names, titles, descriptions, input schemas and annotations as recorded):
`python catalogue_server.py NAME` over stdio, or
`python catalogue_server.py --http PORT NAME...` over Streamable HTTP at /NAME/mcp (one process
for many servers: quick to start). Every tool answers with its name and arguments, so a test can
see which tool a model's call reached."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcpkit import Server
from mcpkit.protocol.content import ToolAnnotations
from mcpkit.server.tools import Tool

DATA = Path(__file__).resolve().parent.parent / "data/tool_catalogues"
#: `ToolAnnotations` fields by their names on the wire.
HINTS = {
    "title": "title",
    "readOnlyHint": "read_only_hint",
    "destructiveHint": "destructive_hint",
    "idempotentHint": "idempotent_hint",
    "openWorldHint": "open_world_hint",
}


def annotations(tool: dict[str, Any]) -> ToolAnnotations | None:
    """The recorded tool's annotations (its title and hints), as its server listed them."""
    raw = tool.get("annotations")
    if not isinstance(raw, dict) or not raw:
        return None
    return ToolAnnotations(**{HINTS[k]: v for k, v in raw.items() if k in HINTS})


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
                annotations=annotations(tool),
            )
        )
    return server


def http_router(names: list[str]) -> Any:
    """One ASGI app: /NAME/mcp → that catalogue's server."""
    apps = {name: catalogue_server(name).http_app() for name in names}

    async def route(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        name, _, rest = scope["path"].lstrip("/").partition("/")
        if name not in apps:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await apps[name]({**scope, "path": "/" + rest}, receive, send)

    return route


if __name__ == "__main__":
    if sys.argv[1] == "--http":
        import uvicorn

        app = http_router(sys.argv[3:])
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        catalogue_server(sys.argv[1]).run("stdio")
