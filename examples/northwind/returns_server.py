"""Northwind returns: the customer comes from the bearer token, never from tool arguments.

    python returns_server.py PORT

The tokens are static here (`tok-c1001` is customer C-1001), checked by mcpkit's resource-server
layer (`BearerAuth`): a request without a known token gets 401 with the protected-resource
metadata, and tools read the caller through `FromPrincipal`. Swap `StaticTokens` for
`JWTVerifier` or `IntrospectionVerifier` to use a real authorization server.

It advertises the idempotency extension (`dev.mcpkit/idempotency`): a `create_return` repeated
with the same key (a host retrying a call whose answer was lost) gets the first answer instead
of opening a second return.
"""

from __future__ import annotations

import itertools
import sys
from typing import Annotated

from mcpkit import Context, Server, ToolError
from mcpkit.auth import AccessToken, BearerAuth, FromPrincipal, InvalidToken
from mcpkit.server.idempotency import MemoryIdempotencyStore

server = Server("northwind-returns", version="1.0", idempotency=MemoryIdempotencyStore())

ORDERS = {
    "ORD-7": ("C-1001", "KET-BLUE"),
    "ORD-8": ("C-1001", "MUG-SET"),
    "ORD-9": ("C-2002", "KET-RED"),
}
_rma = itertools.count(3001)
RETURNS: dict[str, list[dict[str, str]]] = {}  # customer -> the returns opened
Customer = Annotated[str, FromPrincipal("sub")]


class StaticTokens:
    """A token verifier with a fixed table (demo only)."""

    TOKENS = {"tok-c1001": "C-1001", "tok-c2002": "C-2002"}

    async def verify(self, token: str) -> AccessToken:
        customer = self.TOKENS.get(token)
        if customer is None:
            raise InvalidToken("unknown token")
        return AccessToken(subject=customer, scopes=frozenset({"returns"}))


@server.tool()
async def create_return(
    order_id: str, reason: str, customer: Customer, ctx: Context
) -> dict[str, str]:
    """Open a return for one of the caller's orders; the customer confirms it first.

    Use it when a customer wants to send an item back. Returns the return's status and, once
    created, its RMA number.

    Args:
        order_id: The order to return, such as ORD-7 (one of the caller's).
        reason: Why the item goes back, in the customer's words.
    """
    order = ORDERS.get(order_id)
    if order is None or order[0] != customer:
        raise ToolError(f"No order {order_id!r} for this customer.")
    answer = await ctx.elicit(
        f"Return order {order_id} ({order[1]}) because: {reason}? A prepaid label will be emailed.",
        {
            "type": "object",
            "properties": {
                "confirm": {"type": "boolean", "title": "Confirm the return"},
                "units": {
                    "type": "integer",
                    "title": "Units to return",
                    "minimum": 1,
                    "maximum": 3,
                    "default": 1,
                },
                "label": {
                    "type": "string",
                    "title": "Return label",
                    "oneOf": [
                        {"const": "email", "title": "E-mail me a prepaid label"},
                        {"const": "print", "title": "Print it at the post office"},
                    ],
                    "default": "email",
                },
            },
            "required": ["confirm"],
        },
    )
    content = answer.content or {}
    if not answer.accepted or not content.get("confirm"):
        return {"status": "not created", "reason": f"the customer chose to {answer.action}"}
    created = {
        "status": "created",
        "rma": f"RMA-{next(_rma)}",
        "order_id": order_id,
        "customer": customer,
        "units": str(content.get("units", 1)),
        "label": str(content.get("label", "email")),
    }
    RETURNS.setdefault(customer, []).append(created)
    return created


@server.tool()
async def list_orders(customer: Customer) -> list[dict[str, str]]:
    """List the orders of the customer you are talking to.

    Use it when the customer asks about their orders or you need an order id. Returns each
    order's id and SKU; other customers' orders are never shown."""
    return [{"order_id": o, "sku": sku} for o, (c, sku) in ORDERS.items() if c == customer]


@server.tool()
async def list_returns(customer: Customer) -> list[dict[str, str]]:
    """List the returns opened for the customer you are talking to.

    Use it when the customer asks whether a return exists or what became of it. Returns each
    return's RMA number, order id and units."""
    return [
        {"rma": r["rma"], "order_id": r["order_id"], "units": r["units"]}
        for r in RETURNS.get(customer, [])
    ]


def auth(port: int) -> BearerAuth:
    return BearerAuth(
        StaticTokens(),
        resource=f"http://127.0.0.1:{port}/mcp",
        authorization_servers=["https://auth.northwind.example"],
        resource_name="Northwind returns",
    )


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8102
    server.run("http", port=port, auth=auth(port))
