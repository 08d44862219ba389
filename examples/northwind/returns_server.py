"""Northwind returns: the customer comes from the bearer token, never from tool arguments.

    python returns_server.py PORT

Tokens are static here (a stand-in for the OAuth layer): `tok-c1001` is customer C-1001.
"""

from __future__ import annotations

import contextvars
import itertools
import sys
from typing import Any

import uvicorn

from mcpkit import Context, Server, ToolError

server = Server("northwind-returns", version="1.0")

TOKENS = {"tok-c1001": "C-1001", "tok-c2002": "C-2002"}
ORDERS = {
    "ORD-7": ("C-1001", "KET-BLUE"),
    "ORD-8": ("C-1001", "MUG-SET"),
    "ORD-9": ("C-2002", "KET-RED"),
}
CUSTOMER: contextvars.ContextVar[str] = contextvars.ContextVar("customer")
_rma = itertools.count(3001)


@server.tool()
async def create_return(order_id: str, reason: str, ctx: Context) -> dict[str, str]:
    """Open a return for one of the caller's orders; the customer confirms first."""
    customer = CUSTOMER.get()
    order = ORDERS.get(order_id)
    if order is None or order[0] != customer:
        raise ToolError(f"No order {order_id!r} for this customer.")
    answer = await ctx.elicit(
        f"Return order {order_id} ({order[1]}) because: {reason}? A prepaid label will be emailed.",
        {
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "title": "Confirm the return"}},
            "required": ["confirm"],
        },
    )
    if not answer.accepted or not (answer.content or {}).get("confirm"):
        return {"status": "not created", "reason": f"the customer chose to {answer.action}"}
    return {
        "status": "created",
        "rma": f"RMA-{next(_rma)}",
        "order_id": order_id,
        "customer": customer,
    }


@server.tool()
async def list_orders(customer_id: str) -> list[dict[str, str]]:
    """The caller's orders. `customer_id` must be the authenticated customer."""
    if customer_id != CUSTOMER.get():
        raise ToolError("You can only list your own orders.")
    return [{"order_id": o, "sku": sku} for o, (c, sku) in ORDERS.items() if c == customer_id]


class StaticTokens:
    """ASGI wrapper: 401 without a known bearer token; the customer goes into a context variable."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            auth = dict(scope["headers"]).get(b"authorization", b"").decode()
            customer = TOKENS.get(auth.removeprefix("Bearer ").strip())
            if customer is None:
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"www-authenticate", b"Bearer"), (b"content-length", b"0")],
                    }
                )
                await send({"type": "http.response.body", "body": b""})
                return
            CUSTOMER.set(customer)
        await self.app(scope, receive, send)


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8102
    uvicorn.run(StaticTokens(server.http_app()), host="127.0.0.1", port=port, log_level="warning")
