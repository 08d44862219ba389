"""`FromPrincipal`: a handler parameter filled from the verified access token.

    @server.tool(scopes=["orders:read"])
    async def my_orders(customer_id: Annotated[str, FromPrincipal("sub")]) -> list[str]:
        ...

The parameter is left out of the input schema and never read from arguments: a client sending
`customer_id` gets "unexpected argument" (the schema forbids extra properties), so identity
comes from the token on every request, whatever the model puts in the call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

from .access import AccessToken

__all__ = ["FromPrincipal", "PrincipalMissing", "principal_marker"]


class PrincipalMissing(Exception):
    """The request carries no verified token, or the token lacks the claim."""


@dataclass(frozen=True, slots=True)
class FromPrincipal:
    """Fill the parameter with a claim of the caller's token (`sub` by default; `client_id`,
    `scope`, or any other claim name)."""

    claim: str = "sub"

    def resolve(self, access: AccessToken | None) -> Any:
        if access is None:
            raise PrincipalMissing("this needs an authenticated caller")
        value = access.claim(self.claim)
        if value is None:
            raise PrincipalMissing(f"the caller's token has no {self.claim!r} claim")
        return value


def principal_marker(annotation: Any) -> FromPrincipal | None:
    """The `FromPrincipal` inside `Annotated[..., FromPrincipal(...)]`, if any."""
    if get_origin(annotation) is not Annotated:
        return None
    for extra in get_args(annotation)[1:]:
        if isinstance(extra, FromPrincipal):
            return extra
    return None
