"""`TokenExchange`: RFC 8693 token exchange as a grant. A service acting for a user (the
gateway) trades the user's token from its own front for a token of the MCP server's
authorization server, which must trust the issuer of the token traded; no browser is involved.
"""

from __future__ import annotations

from dataclasses import dataclass

from .grants import TOKEN_EXCHANGE, Flow, JwtBearer, _resolve
from .tokens import TokenSet

__all__ = ["ACCESS_TOKEN", "TokenExchange"]

ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token"


@dataclass
class TokenExchange(JwtBearer):
    """The subject token (`assertion`, read anew each time: the user's current one) is
    exchanged for an access token to `flow.resource` (RFC 8693 §2.1; `resource` is added by
    `Flow.token`); the client authenticates as a `JwtBearer` client does."""

    subject_token_type: str = ACCESS_TOKEN

    async def obtain(self, flow: Flow) -> TokenSet:
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": await _resolve(self.assertion),
            "subject_token_type": self.subject_token_type,
            "requested_token_type": ACCESS_TOKEN,
            **flow.scope_param(),
        }
        return await flow.token(self.client_identity(flow.meta), form)
