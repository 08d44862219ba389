"""An MCP server protected by OAuth: `python examples/protected_server.py` (set AS_ISSUER).

The caller's identity comes from the access token: `customer_id` is filled from the token's
`sub` and is not part of the tool's input schema.
"""

import os
from typing import Annotated

from mcpkit import Context, Server
from mcpkit.auth import BearerAuth, FromPrincipal, JWTVerifier

ISSUER = os.environ.get("AS_ISSUER", "https://auth.example.com")
RESOURCE = os.environ.get("MCP_RESOURCE", "http://127.0.0.1:8000/mcp")

server = Server("orders")


@server.tool(scopes=["orders:read"])
async def my_orders(customer_id: Annotated[str, FromPrincipal("sub")]) -> list[str]:
    """The caller's open orders."""
    return [f"{customer_id}-order-1"]


@server.tool(scopes=["orders:write"])
async def cancel(order_id: str, ctx: Context) -> str:
    """Cancel one of the caller's orders (needs orders:write: others get a 403 step-up)."""
    return f"{ctx.principal} cancelled {order_id}"


auth = BearerAuth(
    JWTVerifier(issuer=ISSUER, audience=RESOURCE, jwks_uri=f"{ISSUER}/.well-known/jwks.json"),
    resource=RESOURCE,
    authorization_servers=[ISSUER],
    scopes_supported=["orders:read"],
)

if __name__ == "__main__":
    server.run("http", port=8000, auth=auth)
