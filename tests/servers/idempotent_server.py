"""A server with idempotency keys on: `python idempotent_server.py PORT [REDIS_URL | plain]`
(HTTP; `plain`: the same server without the extension, as servers that do not know it are).

Bearer tokens are caller names (`Authorization: Bearer alice`). `bump` counts its runs per
caller, so a test can prove how often a keyed call really ran; `runs` reads the count.
"""

from __future__ import annotations

import sys
from collections import Counter

from mcpkit import Context, Server
from mcpkit.auth import AccessToken, BearerAuth
from mcpkit.server.idempotency import MemoryIdempotencyStore
from mcpkit.server.redis_idempotency import RedisIdempotencyStore

port = int(sys.argv[1])
where = sys.argv[2] if len(sys.argv) > 2 else None
store = (
    None
    if where == "plain"
    else RedisIdempotencyStore(where)
    if where
    else MemoryIdempotencyStore()
)
server = Server("idempotent", idempotency=store)
counts: Counter[str | None] = Counter()


@server.tool()
async def bump(ctx: Context, amount: int = 1) -> int:
    """Adds to the caller's count (not idempotent by itself): the new count."""
    counts[ctx.principal] += amount
    return counts[ctx.principal]


@server.tool()
async def runs(ctx: Context) -> int:
    """The caller's count."""
    return counts[ctx.principal]


class Names:
    async def verify(self, token: str) -> AccessToken:
        return AccessToken(token)


auth = BearerAuth(
    Names(), resource=f"http://127.0.0.1:{port}/mcp", authorization_servers=["https://as.test"]
)

if __name__ == "__main__":
    server.run("http", port=port, auth=auth)
