"""Northwind shipping: parcel tracking, served over stdio.

`track_parcel` comes with an MCP App (SEP-1865): a parcel card (`ui://shipping/parcel-card`,
the HTML beside this file) that hosts able to render apps show with the result, and whose
"Reserve replacement" button calls `reserve_replacement`, a tool only the app can see.
"""

from __future__ import annotations

import itertools
from pathlib import Path

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

CARD = "ui://shipping/parcel-card"
APP_MIME = "text/html;profile=mcp-app"
REPLACEMENTS: dict[str, str] = {}
_replacements = itertools.count(1)


@server.tool(
    annotations=ToolAnnotations(title="Track parcel", read_only_hint=True, open_world_hint=False),
    meta={"ui": {"resourceUri": CARD}},
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


@server.tool(
    annotations=ToolAnnotations(destructive_hint=False, open_world_hint=False),
    meta={"ui": {"resourceUri": CARD, "visibility": ["app"]}},
)
async def reserve_replacement(parcel_id: str) -> dict[str, str]:
    """Book a replacement shipment for a parcel that arrived damaged or was lost.

    Use it when the customer presses "Reserve replacement" on the parcel card: only that app
    sees this tool, never the model. Returns the replacement's parcel id and its status;
    asking again for the same parcel returns the same replacement.

    Args:
        parcel_id: The parcel to replace, such as NW-1042.
    """
    parcel_id = parcel_id.strip().upper()
    if parcel_id not in PARCELS:
        raise ToolError(f"No parcel {parcel_id!r}.")
    if parcel_id not in REPLACEMENTS:
        REPLACEMENTS[parcel_id] = f"NW-R{next(_replacements):03d}"
    return {"parcel_id": parcel_id, "replacement": REPLACEMENTS[parcel_id], "status": "booked"}


@server.resource(CARD, name="parcel_card", title="Parcel card", mime_type=APP_MIME)
async def parcel_card() -> dict[str, object]:
    """The parcel card app: no network access, no outside resources (the default policy)."""
    html = (Path(__file__).parent / "parcel_card.html").read_text(encoding="utf-8")
    return {
        "uri": CARD,
        "mimeType": APP_MIME,
        "text": html,
        "_meta": {"ui": {"prefersBorder": True}},
    }


if __name__ == "__main__":
    server.run("stdio")
