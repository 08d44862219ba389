"""The official SDK (mcp 2.3.0, ``MCPServer``) for `listeners.py`: default settings, one tool
``change`` that announces a change of the tool list to every listen stream. Served like the
harness anchor: Streamable HTTP, uvicorn with uvloop + httptools, log level warning.

    bench/.venvs/sdk/bin/python sdk_listen_server.py --port 8000
"""

from __future__ import annotations

import argparse
import logging

from mcp.server import MCPServer
from mcp.server.mcpserver import Context


def build() -> MCPServer:
    mcp = MCPServer("bench-sdk-listen", log_level="WARNING")

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
    a = ap.parse_args()
    logging.getLogger().setLevel(logging.WARNING)
    import uvicorn

    app = build().streamable_http_app(json_response=True, host=a.host)
    uvicorn.run(app, host=a.host, port=a.port, log_level="warning", access_log=False,
                loop="uvloop", http="httptools")


if __name__ == "__main__":
    main()
