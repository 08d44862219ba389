"""A server for the record and replay tests (`tests/test_record_replay.py`), on stdio (or
`--http PORT`), both eras: a tool that asks the user (an elicitation round), one that echoes a key it is given and
one that reads the environment (secrets the cassette must leave out)."""

from __future__ import annotations

import os
import sys

from mcpkit import Context, Server

server = Server("cassette-test", version="1.0")

CONFIRM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}},
    "required": ["confirm"],
}


@server.tool()
async def order(item: str, ctx: Context) -> str:
    """Order an item once the user confirms."""
    answer = await ctx.elicit(f"Order {item}?", CONFIRM)
    if answer.accepted and (answer.content or {}).get("confirm"):
        return f"ordered {item}"
    return f"not ordered ({answer.action})"


@server.tool()
async def login(user: str, api_key: str) -> str:
    """Log in; the answer repeats the key."""
    return f"{user} logged in with {api_key}"


@server.tool()
async def environment(name: str) -> str:
    """The value of one environment variable."""
    return os.environ.get(name, "")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run("http", port=int(sys.argv[2]))
    else:
        server.run("stdio")
