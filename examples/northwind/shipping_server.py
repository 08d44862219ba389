"""Northwind shipping: parcel tracking, served over stdio."""

from __future__ import annotations

from mcpkit import Server, ToolAnnotations, ToolError
from mcpkit.telemetry import span

server = Server(
    "northwind-shipping", version="1.0", instructions="Track Northwind parcels by id (NW-####)."
)

PARCELS = {
    "NW-1042": {
        "status": "in transit",
        "carrier": "Nordic Post",
        "eta": "2026-12-02",
        "last_scan": "Hamburg hub",
    },
    "NW-1043": {
        "status": "delivered",
        "carrier": "Nordic Post",
        "eta": "2026-11-27",
        "last_scan": "front door",
    },
}


@server.tool(
    annotations=ToolAnnotations(title="Track parcel", read_only_hint=True, open_world_hint=False)
)
async def track_parcel(parcel_id: str) -> dict[str, str]:
    """Find out where a Northwind parcel is.

    Use it when a customer asks about a delivery. Returns the parcel's status, carrier,
    estimated delivery date and last scan.

    Args:
        parcel_id: The parcel id printed on the shipping notice, such as NW-1042.
    """
    with span("parcels.lookup", parcel_id=parcel_id):  # joins the trace when telemetry is on
        parcel = PARCELS.get(parcel_id.strip().upper())
    if parcel is None:
        raise ToolError(f"No parcel {parcel_id!r}; parcel ids look like NW-1042.")
    return {"parcel_id": parcel_id.upper(), **parcel}


if __name__ == "__main__":
    server.run("stdio")
