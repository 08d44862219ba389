"""A stdio server for the call pipeline's front-end tests.

    python pipeline_server.py [VARIANT]

`order(sku, customer_id)` says who ordered what; `stall()` never answers (a deadline ends it);
`crawl(steps, pause)` reports progress every `pause` seconds; `wipe()` is for deny rules. VARIANT (default 1) is written into `order`'s description: a
second run with another variant is a pinned tool whose definition changed.
"""

from __future__ import annotations

import asyncio
import sys

from mcpkit import Context, Server

VARIANT = sys.argv[1] if len(sys.argv) > 1 else "1"
server = Server("pipeline")


@server.tool(description=f"Order an item (variant {VARIANT}).")
def order(sku: str, customer_id: str = "nobody") -> str:
    return f"{sku} for {customer_id}"


@server.tool(description="Never answers.")
async def stall() -> str:
    await asyncio.Event().wait()
    return "unreachable"


@server.tool(description="Reports progress every `pause` seconds, `steps` times.")
async def crawl(steps: int, pause: float, ctx: Context) -> str:
    for step in range(1, steps + 1):
        await asyncio.sleep(pause)  # the work this tool stands for
        await ctx.report_progress(step, steps)
    return f"crawled {steps} steps"


@server.tool(description="Deletes everything.")
def wipe() -> str:
    return "wiped"


if __name__ == "__main__":
    server.run()
