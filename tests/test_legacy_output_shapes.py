"""A tool whose result is not an object (a list: fine on 2026-07-28, where structuredContent
may be any JSON value) on a 2025-11-25 session, whose schema allows objects only: listed
without an outputSchema, answered without structuredContent (the text content stays)."""

from __future__ import annotations

from gateway_support import serving
from mcpkit import Server
from mcpkit.client import Client


def orders_server() -> Server:
    server = Server("orders")

    @server.tool()
    async def list_orders() -> list[dict[str, str]]:
        """The orders."""
        return [{"order_id": "ORD-7"}]

    @server.tool()
    async def one_order() -> dict[str, str]:
        """One order."""
        return {"order_id": "ORD-7"}

    return server


async def test_non_object_results_on_a_legacy_session() -> None:
    async with serving(orders_server()) as url, Client(url, era="legacy") as client:
        tools = {t.name: t for t in await client.list_tools()}
        assert tools["list_orders"].output_schema is None
        assert tools["one_order"].output_schema is not None  # objects keep theirs
        listed = await client.call_tool("list_orders", {})
        assert "structuredContent" not in listed.raw and "ORD-7" in listed.text
        one = await client.call_tool("one_order", {})
        assert one.structured_content == {"order_id": "ORD-7"}


async def test_the_modern_wire_keeps_them() -> None:
    async with Client(orders_server()) as client:
        tools = {t.name: t for t in await client.list_tools()}
        assert tools["list_orders"].output_schema is not None
        assert (await client.call_tool("list_orders", {})).structured_content == [
            {"order_id": "ORD-7"}
        ]
