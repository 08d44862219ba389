"""Northwind warehouse: stock and reservations, served over Streamable HTTP.

python warehouse_server.py PORT
"""

from __future__ import annotations

import itertools
import sys

from mcpkit import Server, ToolAnnotations, ToolError

server = Server("northwind-warehouse", version="1.0")

STOCK = {"KET-BLUE": 14, "KET-RED": 0, "MUG-SET": 52}
RESERVATIONS: dict[str, dict[str, object]] = {}
_ids = itertools.count(501)


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
async def get_stock(sku: str) -> dict[str, object]:
    """Units in stock for a SKU (e.g. KET-BLUE)."""
    if sku not in STOCK:
        raise ToolError(f"Unknown SKU {sku!r}; known: {', '.join(sorted(STOCK))}.")
    return {"sku": sku, "in_stock": STOCK[sku]}


@server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=False))
async def reserve_stock(sku: str, quantity: int, order_id: str) -> dict[str, object]:
    """Hold units of a SKU for an order; returns the reservation id."""
    if STOCK.get(sku, 0) < quantity:
        raise ToolError(f"Only {STOCK.get(sku, 0)} of {sku} in stock.")
    STOCK[sku] -= quantity
    rid = f"R-{next(_ids)}"
    RESERVATIONS[rid] = {"sku": sku, "quantity": quantity, "order_id": order_id}
    if "reservation_status" not in server.tools:
        server.tool()(
            reservation_status
        )  # appears once there is something to look up: list_changed
    return {"reservation_id": rid, **RESERVATIONS[rid]}


@server.tool(annotations=ToolAnnotations(destructive_hint=True, open_world_hint=False))
async def cancel_reservation(reservation_id: str) -> str:
    """Cancel a reservation and return its units to stock."""
    reservation = RESERVATIONS.pop(reservation_id, None)
    if reservation is None:
        raise ToolError(f"No reservation {reservation_id!r}.")
    STOCK[str(reservation["sku"])] += int(str(reservation["quantity"]))
    return f"Reservation {reservation_id} cancelled."


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
async def stock_movements(days: int = 30) -> str:
    """The stock movement log: every unit in and out of the warehouse, one line each."""
    skus = sorted(STOCK)
    lines = [
        f"day {d:02d} {skus[(d * 7 + i) % len(skus)]} {'+' if i % 3 == 0 else '-'}{1 + (d + i) % 4} "
        f"order ORD-{1000 + d * 10 + i}"
        for d in range(1, days + 1)
        for i in range(12)
    ]
    return "\n".join(lines)


async def reservation_status(reservation_id: str) -> dict[str, object]:
    """The state of a reservation."""
    if reservation_id not in RESERVATIONS:
        raise ToolError(f"No reservation {reservation_id!r}.")
    return {"reservation_id": reservation_id, "state": "held", **RESERVATIONS[reservation_id]}


if __name__ == "__main__":
    server.run("http", port=int(sys.argv[1]) if len(sys.argv) > 1 else 8101)
