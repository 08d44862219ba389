"""The official SDK (mcp 2.3.0, ``MCPServer``) for `listeners.py`: default settings, one tool
``change`` that announces a change of the tool list to every listen stream. Served like the
harness anchor: Streamable HTTP, uvicorn with uvloop + httptools, log level warning.
`--max-subscriptions N` replaces the default listen handler (1,024 streams at most) with one
allowing N, through the lowlevel server's `add_request_handler`.

    bench/.venvs/sdk/bin/python sdk_listen_server.py --port 8000 [--max-subscriptions 10000]
"""

from __future__ import annotations

import argparse
import logging

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp_types import SubscriptionsListenRequestParams


def build(max_subscriptions: int | None) -> MCPServer:
    bus = InMemorySubscriptionBus()
    mcp = MCPServer("bench-sdk-listen", log_level="WARNING", subscriptions=bus)
    if max_subscriptions is not None:  # no public knob on MCPServer: its lowlevel server's
        handler = ListenHandler(bus, max_subscriptions=max_subscriptions)
        mcp._lowlevel_server.add_request_handler(
            "subscriptions/listen", SubscriptionsListenRequestParams, handler)

    @mcp.tool()
    async def change(ctx: Context) -> str:
        """Tell every listener that the tool list changed."""
        await ctx.notify_tools_changed()
        return "changed"

    return mcp


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--max-subscriptions", type=int)
    a = ap.parse_args()
    logging.getLogger().setLevel(logging.WARNING)
    import uvicorn

    app = build(a.max_subscriptions).streamable_http_app(json_response=True, host=a.host)
    uvicorn.run(app, host=a.host, port=a.port, log_level="warning", access_log=False,
                loop="uvloop", http="httptools")


if __name__ == "__main__":
    main()
