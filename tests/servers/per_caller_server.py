"""An HTTP backend whose tool list depends on who calls, for the gateway's per-caller lists:
`python per_caller_server.py DIR [public] PORT`. The bearer token `tok-NAME` is the caller NAME.
Alice's list holds `alice_notes` and Bob's `bob_notes` (each tool needs its owner's scope, so
each list says `cacheScope: "private"`); with `public`, every caller gets the same `notes` tool
and public lists. Each `tools/list` it answers appends its caller's name to `DIR/lists`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcpkit import Context, Server
from mcpkit.auth import AccessToken, BearerAuth
from mcpkit.server import methods
from mcpkit.server.auth.access import current_access
from mcpkit.server.caching import CacheHint

folder, public, port = Path(sys.argv[1]), "public" in sys.argv[2:-1], int(sys.argv[-1])
#: Ten minutes: a record made in a test is still fresh when the gateway starts again.
HINT = CacheHint(600_000, "public")
server = Server("notes", cache={"server/discover": HINT, "tools/list": HINT})

if public:

    @server.tool()
    async def notes(ctx: Context) -> str:
        """Everyone's notes."""
        return f"shared notes, read by {ctx.principal}"

else:

    @server.tool(scopes=["alice"])
    async def alice_notes(ctx: Context) -> str:
        """Alice's own notes."""
        return f"alice's notes, read by {ctx.principal}"

    @server.tool(scopes=["bob"])
    async def bob_notes(ctx: Context) -> str:
        """Bob's own notes."""
        return f"bob's notes, read by {ctx.principal}"


listed = methods.METHODS["tools/list"]


async def tools_list(server: Server, request: Any) -> Any:
    access = current_access.get()
    with (folder / "lists").open("a", encoding="utf-8") as out:
        out.write(f"{access.principal if access is not None else None}\n")
    return await listed(server, request)


server.set_method("tools/list", tools_list)


class Names:
    async def verify(self, token: str) -> AccessToken:
        who = token.removeprefix("tok-")
        return AccessToken(who, scopes=frozenset({who}), token=token)


if __name__ == "__main__":
    auth = BearerAuth(
        Names(), resource=f"http://127.0.0.1:{port}/mcp", authorization_servers=["https://as.test"]
    )
    server.run("http", port=port, auth=auth)
