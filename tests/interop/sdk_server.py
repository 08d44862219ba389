"""An official-SDK (`mcp` 2.x, MCPServer) server for interop tests. Runs in its own venv.

python sdk_server.py stdio
python sdk_server.py http PORT
"""

from __future__ import annotations

import sys
from typing import Annotated

import uvicorn
from mcp.server import MCPServer
from mcp.server.mcpserver import Elicit, Resolve
from pydantic import BaseModel

mcp = MCPServer("sdk-interop")


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@mcp.tool()
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
async def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
    """Greets the user, asking their name first."""
    return f"Hello, {who.name}!"


@mcp.resource("interop://note", mime_type="text/plain")
def note() -> str:
    """A note."""
    return "interop note"


@mcp.prompt()
def review(code: str) -> str:
    """Review some code."""
    return f"Please review: {code}"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        mcp.run("stdio")
    else:
        app = mcp.streamable_http_app(json_response=False, host="127.0.0.1")
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
