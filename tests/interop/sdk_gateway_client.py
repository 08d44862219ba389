"""Runs inside the interop venv (the official `mcp` 2.3.0 SDK): drives `mcpkit gateway` over
Streamable HTTP with a bearer token and prints what it saw as one JSON object.

    python sdk_gateway_client.py URL TOKEN auto|legacy
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx2
from mcp import types
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client


def text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def main() -> None:
    url, token, mode = sys.argv[1:4]
    seen: dict[str, Any] = {"elicited": []}

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen["elicited"].append(params.message)
        return types.ElicitResult(action="accept", content={})

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    async with (
        http,
        Client(
            streamable_http_client(url, http_client=http), mode=mode, elicitation_callback=on_elicit
        ) as client,
    ):
        seen["protocolVersion"] = client.protocol_version
        seen["serverName"] = client.server_info.name if client.server_info else None
        tools = await client.list_tools()
        seen["tools"] = sorted(t.name for t in tools.tools)
        seen["track"] = text(
            await client.call_tool("shipping__track_parcel", {"parcel_id": "NW-1042"})
        )
        seen["stock"] = text(await client.call_tool("warehouse__get_stock", {"sku": "KET-BLUE"}))
        seen["orders"] = text(await client.call_tool("returns__list_orders", {}))
        # "ask" in the gateway's rules: an elicitation to this client, then the call.
        reserved = await client.call_tool(
            "warehouse__reserve_stock", {"sku": "MUG-SET", "quantity": 1, "order_id": "ORD-8"}
        )
        seen["reserved"] = text(reserved)
        denied = await client.call_tool("warehouse__cancel_reservation", {"reservation_id": "x"})
        seen["denied"] = [denied.is_error, text(denied)]
        forged = await client.call_tool("returns__list_orders", {"customer_id": "C-2002"})
        seen["forged"] = [forged.is_error, text(forged)]
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main())
