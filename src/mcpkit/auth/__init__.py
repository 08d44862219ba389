"""Authorization (MCP basic/authorization): the OAuth client and the resource server side.

Client (used by `Client(url, auth=...)`):
    OAuth                  answers 401/403 from an MCP server: discovery, registration, tokens
    AuthorizationCode      user authorization with PKCE (LoopbackAuthorizer / HeadlessAuthorizer)
    ClientCredentials, JwtBearer, EnterpriseManaged   non-interactive grants
    FileTokenStore, MemoryTokenStore                  credentials keyed by issuer

Resource server (used by `server.http_app(auth=...)`):
    BearerAuth             token check, Protected Resource Metadata, 401/403 challenges
    JWTVerifier            JWT access tokens against a JWKS (iss, aud, exp, nbf)
    IntrospectionVerifier  opaque tokens via RFC 7662
    AccessToken            what a verified token says; `ctx.auth` in handlers
    FromPrincipal          a tool parameter filled from the token, never from arguments

Names load on first use: `import mcpkit.auth` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .access import AccessToken, InvalidToken, TokenVerifier
    from .authorizers import HeadlessAuthorizer, LoopbackAuthorizer
    from .grants import AuthorizationCode, ClientCredentials, EnterpriseManaged, JwtBearer
    from .introspection import IntrospectionVerifier
    from .jwt_verifier import JWTVerifier
    from .oauth import OAuth
    from .principal import FromPrincipal
    from .registration import ClientMetadata
    from .resource import BearerAuth, EnvironmentAuth
    from .token_store import FileTokenStore, MemoryTokenStore, TokenStore
    from .tokens import ClientIdentity, TokenSet

_EXPORTS = {
    "AccessToken": "access",
    "InvalidToken": "access",
    "TokenVerifier": "access",
    "HeadlessAuthorizer": "authorizers",
    "LoopbackAuthorizer": "authorizers",
    "AuthorizationCode": "grants",
    "ClientCredentials": "grants",
    "EnterpriseManaged": "grants",
    "JwtBearer": "grants",
    "IntrospectionVerifier": "introspection",
    "JWTVerifier": "jwt_verifier",
    "OAuth": "oauth",
    "FromPrincipal": "principal",
    "ClientMetadata": "registration",
    "BearerAuth": "resource",
    "EnvironmentAuth": "resource",
    "FileTokenStore": "token_store",
    "MemoryTokenStore": "token_store",
    "TokenStore": "token_store",
    "ClientIdentity": "tokens",
    "TokenSet": "tokens",
}

__all__ = [
    "AccessToken",
    "AuthorizationCode",
    "BearerAuth",
    "ClientCredentials",
    "ClientIdentity",
    "ClientMetadata",
    "EnterpriseManaged",
    "EnvironmentAuth",
    "FileTokenStore",
    "FromPrincipal",
    "HeadlessAuthorizer",
    "IntrospectionVerifier",
    "InvalidToken",
    "JWTVerifier",
    "JwtBearer",
    "LoopbackAuthorizer",
    "MemoryTokenStore",
    "OAuth",
    "TokenSet",
    "TokenStore",
    "TokenVerifier",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit.auth' has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
