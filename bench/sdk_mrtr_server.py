"""The official SDK (mcp 2.3.0, ``MCPServer``) with the same two tools mrtr_bench.py drives:
``echo(text)`` and ``ask(text)``, which elicits one ``{"ok": bool}`` form through a resolver
(``Annotated[T, Resolve(fn)]`` with ``fn`` returning ``Elicit(message, Model)``).

Served like the harness anchor (/work/shared/bench/anchors/sdk_server.py): Streamable HTTP,
``json_response=True``, uvicorn with uvloop + httptools, one worker, no access log, log level
warning. The requestState key is the SDK default (``RequestStateSecurity.ephemeral()``).

    /tmp/venv-mcp/bin/python sdk_mrtr_server.py --port 8000
"""

from __future__ import annotations

import argparse
import logging
from typing import Annotated

from mcp.server import MCPServer
from mcp.server.mcpserver import Elicit, Resolve
from pydantic import BaseModel


class Confirm(BaseModel):
    ok: bool


def confirm() -> Elicit[Confirm]:
    return Elicit("Confirm?", Confirm)


def build() -> MCPServer:
    mcp = MCPServer("bench-sdk-mrtr", log_level="WARNING")

    @mcp.tool()
    async def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @mcp.tool()
    async def ask(text: str, answer: Annotated[Confirm, Resolve(confirm)]) -> str:
        """Ask the user to confirm, then echo the text."""
        return text if answer.ok else "not confirmed"

    return mcp


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    a = ap.parse_args()

    logging.getLogger().setLevel(logging.WARNING)
    import uvicorn

    app = build().streamable_http_app(json_response=True, host=a.host)
    uvicorn.run(
        app,
        host=a.host,
        port=a.port,
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_level="warning",
        lifespan="on",
    )


if __name__ == "__main__":
    main()
