"""A server with idempotency keys on: `python idempotent_server.py PORT [REDIS_URL | plain]`
(HTTP; `plain`: the same server without the extension, as servers that do not know it are;
`stdio` as PORT: over stdio; `MCPKIT_TEST_LEASE`: the Redis lease in seconds).

Bearer tokens are caller names (`Authorization: Bearer alice`). `bump` counts its runs per
caller, so a test can prove how often a keyed call really ran; `runs` reads the count.
`slow_bump` counts, appends a line to `MCPKIT_TEST_EFFECTS` (a file: its effect seen from
outside, across processes), then takes `seconds` to answer.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections import Counter

from mcpkit import Context, Server
from mcpkit.auth import AccessToken, BearerAuth
from mcpkit.server.idempotency import MemoryIdempotencyStore
from mcpkit.server.redis_idempotency import RedisIdempotencyStore

port = 0 if sys.argv[1] == "stdio" else int(sys.argv[1])
where = sys.argv[2] if len(sys.argv) > 2 else None
lease = float(os.environ.get("MCPKIT_TEST_LEASE", "30"))
store = (
    None
    if where == "plain"
    else RedisIdempotencyStore(where, lease_seconds=lease)
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


def record_effect(line: str) -> None:
    effects = os.environ.get("MCPKIT_TEST_EFFECTS")
    if effects:
        with open(effects, "a") as out:
            out.write(line + "\n")


@server.tool()
async def slow_bump(ctx: Context, seconds: float, amount: int = 1) -> int:
    """Adds to the caller's count and records it, then takes `seconds` to answer."""
    counts[ctx.principal] += amount
    record_effect(f"{ctx.principal} {amount}")
    await asyncio.sleep(seconds)
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
    if port:
        server.run("http", port=port, auth=auth)
    else:
        server.run("stdio")
