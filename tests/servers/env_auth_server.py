"""A stdio server whose credential comes from the environment (BASE-31): SHOP_TOKEN."""

from __future__ import annotations

from typing import Annotated

from mcpkit import Server
from mcpkit.auth import AccessToken, EnvironmentAuth, FromPrincipal, InvalidToken


class NameTokens:
    async def verify(self, token: str) -> AccessToken:
        sub, _, scopes = token.partition(":")
        if not sub:
            raise InvalidToken()
        return AccessToken(sub, frozenset(scopes.split(",")) - {""})


server = Server("env-auth")


@server.tool(scopes=["orders:read"])
def my_orders(customer_id: Annotated[str, FromPrincipal()]) -> str:
    """The caller's orders."""
    return f"orders of {customer_id}"


if __name__ == "__main__":
    server.run(auth=EnvironmentAuth(NameTokens(), env_var="SHOP_TOKEN"))
