"""Northwind warehouse: stock and reservations, served over Streamable HTTP.

    python warehouse_server.py PORT

Reservations are state handles (`server.handles`): `reserve_stock` returns an opaque
`reservation_...` id bound to the caller, valid for a day; later calls hand it back.
"""

from __future__ import annotations

import sys

from mcpkit import Server, ToolAnnotations, ToolError
from mcpkit.telemetry import span

server = Server("northwind-warehouse", version="1.0")
reservations = server.handles.kind(
    "reservation", ttl=24 * 3600, start_over="call reserve_stock again to hold the units"
)

STOCK = {"KET-BLUE": 14, "KET-RED": 0, "MUG-SET": 52}


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
async def get_stock(sku: str) -> dict[str, object]:
    """Look up how many units of one product are in stock.

    Use it before promising a delivery or a replacement. Returns the SKU and its units.

    Args:
        sku: The product's stock-keeping unit, such as KET-BLUE or MUG-SET.
    """
    with span("stock.lookup", sku=sku):  # joins the trace when telemetry is on
        units = STOCK.get(sku)
    if units is None:
        raise ToolError(f"Unknown SKU {sku!r}; known: {', '.join(sorted(STOCK))}.")
    return {"sku": sku, "in_stock": units}


@server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=False))
async def reserve_stock(sku: str, quantity: int, order_id: str) -> dict[str, object]:
    """Hold units of a product for an order so nobody else can take them.

    Use it once a replacement or an order is agreed; check get_stock first. Returns the
    reservation_id to pass to reservation_status or cancel_reservation (valid for a day).

    Args:
        sku: The product's stock-keeping unit, such as KET-BLUE.
        quantity: How many units to hold (at least 1).
        order_id: The order the units are for, such as ORD-7.
    """
    if quantity < 1:
        raise ToolError("quantity must be at least 1.")
    if STOCK.get(sku, 0) < quantity:
        raise ToolError(f"Only {STOCK.get(sku, 0)} of {sku} in stock.")
    STOCK[sku] -= quantity
    held = {"sku": sku, "quantity": quantity, "order_id": order_id}
    rid = await reservations.create(held)
    if "reservation_status" not in server.tools:
        server.tool()(
            reservation_status
        )  # appears once there is something to look up: list_changed
    return {"reservation_id": rid, **held}


@server.tool(annotations=ToolAnnotations(destructive_hint=True, open_world_hint=False))
async def cancel_reservation(reservation_id: str) -> str:
    """Cancel a reservation and put its units back in stock.

    Use it when the customer no longer wants the held units. Returns a confirmation line;
    the reservation id cannot be used afterwards.

    Args:
        reservation_id: The id reserve_stock returned, exactly as given.
    """
    held = await reservations.discard(reservation_id)
    STOCK[str(held["sku"])] += int(str(held["quantity"]))
    return f"Reservation {reservation_id} cancelled."


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
async def stock_movements(days: int) -> str:
    """The stock movement log: every unit in and out of the warehouse, one line each.

    Use it to explain how stock of a SKU changed over time; for the current level use get_stock.
    Returns one line per movement: the day, the SKU, the change in units and the order.

    Args:
        days: How many past days of movements to return.
    """
    skus = sorted(STOCK)
    lines = [
        f"day {d:02d} {skus[(d * 7 + i) % len(skus)]} {'+' if i % 3 == 0 else '-'}{1 + (d + i) % 4} "
        f"order ORD-{1000 + d * 10 + i}"
        for d in range(1, days + 1)
        for i in range(12)
    ]
    return "\n".join(lines)


async def reservation_status(reservation_id: str) -> dict[str, object]:
    """Show what a reservation holds and whether it is still held.

    Use it to confirm a reservation before telling the customer about it. Returns the
    reservation's SKU, quantity, order and state.

    Args:
        reservation_id: The id reserve_stock returned, exactly as given.
    """
    held = await reservations.resolve(reservation_id)
    return {"reservation_id": reservation_id, "state": "held", **held}


if __name__ == "__main__":
    server.run("http", port=int(sys.argv[1]) if len(sys.argv) > 1 else 8101)
