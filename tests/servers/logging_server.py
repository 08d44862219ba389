"""A stdio server whose tool writes to the Python log (stderr) and to the MCP log
(`notifications/message`, for peers that ask): run with MCPKIT_LOG_FORMAT=json."""

from __future__ import annotations

import logging

from mcpkit import Context, Server

server = Server("logging")
log = logging.getLogger("shop.orders")


@server.tool()
async def place(ctx: Context, order: str) -> str:
    """Place an order."""
    log.warning("placing %s", order, extra={"order": order})
    await ctx.log("info", f"placing {order}")
    return f"placed {order}"


if __name__ == "__main__":
    server.run("stdio")
