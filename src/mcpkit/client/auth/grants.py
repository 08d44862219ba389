"""How a token is obtained once the authorization server is known. One class per grant:

AuthorizationCode   a user authorizes in a browser (PKCE S256, `resource`, `iss` checks);
                    client id pre-registered, a Client ID Metadata Document, or DCR
ClientCredentials   the client acts for itself: secret or `private_key_jwt` (SEP-1046)
JwtBearer           a workload identity JWT as the grant (RFC 7523, SEP-1933)
EnterpriseManaged   an IdP ID token exchanged for an ID-JAG (RFC 8693), then a JWT bearer
                    grant at the authorization server (SEP-990)
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlencode

import aiohttp

from ...protocol.auth_metadata import AuthServerMetadata
from ..errors import AuthorizationError, OAuthError
from .authorizers import Authorizer, HeadlessAuthorizer
from .pkce import Pkce
from .registration import ClientMetadata, register_client
from .token_endpoint import post_form, request_token
from .token_store import IssuerRecord
from .tokens import ClientIdentity, TokenSet

if TYPE_CHECKING:
    from .dpop import DPoPKey

__all__ = [
    "AuthorizationCode",
    "ClientCredentials",
    "EnterpriseManaged",
    "Flow",
    "Grant",
    "JwtBearer",
]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"

Secret = str | Callable[[], str | Awaitable[str]]


async def _resolve(value: Secret) -> str:
    out = value() if callable(value) else value
    if not isinstance(out, str):
        out = await out
    return out


@dataclass(slots=True)
class Flow:
    """What a grant needs: the metadata, the `resource` exactly as published, the scopes."""

    http: aiohttp.ClientSession
    meta: AuthServerMetadata
    resource: str
    scopes: tuple[str, ...]
    record: IssuerRecord
    dpop: DPoPKey | None = None
    identity: ClientIdentity | None = None  # set by the grant: persisted when bound to the AS

    async def token(self, identity: ClientIdentity | None, form: dict[str, str]) -> TokenSet:
        form = {**form, "resource": self.resource}  # AUTH-17, byte for byte
        return await request_token(
            self.http,
            self.meta,
            identity,
            form,
            dpop=self.dpop,
            requested_scope=self.scopes,
            resource=self.resource,
        )

    def scope_param(self) -> dict[str, str]:
        return {"scope": " ".join(self.scopes)} if self.scopes else {}


class Grant(Protocol):
    interactive: bool

    async def obtain(self, flow: Flow) -> TokenSet: ...

    def client_identity(self, meta: AuthServerMetadata) -> ClientIdentity | None:
        """The configured identity (pre-registered, CIMD, client credentials), if any: what
        refresh requests authenticate with when no registration is stored."""
        ...

    async def close(self) -> None: ...


def _secret_method(meta: AuthServerMetadata) -> str:
    supported = meta.token_endpoint_auth_methods_supported
    if "client_secret_basic" in supported or "client_secret_post" not in supported:
        return "client_secret_basic"
    return "client_secret_post"


class _Unattended:
    """What the grants that need no user share: no browser to show, nothing to close."""

    interactive = False

    async def close(self) -> None:
        return None


@dataclass
class AuthorizationCode:
    """OAuth 2.1 authorization code with PKCE. Client identity, in the spec's order
    (AUTH-REG-01): `client_id` (pre-registered, bound to `issuer` when given), then a stored
    registration for this issuer, then `client_metadata_url` when the server supports Client
    ID Metadata Documents, then Dynamic Client Registration."""

    authorizer: Authorizer = field(default_factory=HeadlessAuthorizer)
    client_id: str | None = None
    client_secret: str | None = None
    issuer: str | None = None
    auth_method: str | None = None
    client_metadata_url: str | None = None
    metadata: ClientMetadata = field(default_factory=ClientMetadata)
    offline_access: bool = True
    interactive: bool = True

    async def close(self) -> None:
        await self.authorizer.close()

    def client_identity(self, meta: AuthServerMetadata) -> ClientIdentity | None:
        if self.client_id is not None:
            if self.issuer is not None and self.issuer != meta.issuer:
                raise AuthorizationError(  # AUTH-REG-08
                    f"the configured client id is registered with {self.issuer}, but this "
                    f"server now uses {meta.issuer}"
                )
            method = self.auth_method or (
                _secret_method(meta) if self.client_secret is not None else "none"
            )
            return ClientIdentity(self.client_id, self.client_secret, method, meta.issuer)
        if self.client_metadata_url and meta.client_id_metadata_document_supported:
            return ClientIdentity(self.client_metadata_url, auth_method="none")  # portable
        return None

    async def identity(self, flow: Flow) -> ClientIdentity:
        meta = flow.meta
        configured = self.client_identity(meta)
        if configured is not None and self.client_id is not None:
            return configured
        stored = flow.record.client
        redirect = self.authorizer.redirect_uri
        if stored is not None and stored.issuer == meta.issuer and redirect in stored.redirect_uris:
            return stored
        if configured is not None:
            return configured
        metadata = ClientMetadata(
            client_name=self.metadata.client_name,
            redirect_uris=(redirect,),
            grant_types=self.metadata.grant_types,
            application_type=self.metadata.application_type,
            client_uri=self.metadata.client_uri,
            extra=self.metadata.extra,
        )
        identity = await register_client(flow.http, meta, metadata)
        flow.identity = identity
        return identity

    async def obtain(self, flow: Flow) -> TokenSet:
        meta = flow.meta
        if "S256" not in (meta.code_challenge_methods_supported or ()):
            raise AuthorizationError(  # AUTH-SEC-03
                f"{meta.issuer} does not advertise PKCE S256: refusing to authorize"
            )
        if not meta.authorization_endpoint:
            raise AuthorizationError(f"{meta.issuer} has no authorization endpoint")
        await self.authorizer.start()
        identity = await self.identity(flow)
        scopes = flow.scopes
        if (
            self.offline_access
            and "offline_access" in (meta.scopes_supported or ())
            and "offline_access" not in scopes
        ):
            scopes = (*scopes, "offline_access")  # AUTH-26: only when the AS lists it
        pkce = Pkce.generate()
        state = secrets.token_urlsafe(24)
        expected_issuer = meta.issuer  # AUTH-12: recorded with the verifier, before redirecting
        params = {
            "response_type": "code",
            "client_id": identity.client_id,
            "redirect_uri": self.authorizer.redirect_uri,
            "state": state,
            "code_challenge": pkce.challenge,
            "code_challenge_method": pkce.method,
            "resource": flow.resource,
        }
        if scopes:
            params["scope"] = " ".join(scopes)
        sep = "&" if "?" in meta.authorization_endpoint else "?"
        response = await self.authorizer.authorize(
            meta.authorization_endpoint + sep + urlencode(params)
        )
        check_authorization_response(response, expected_issuer, meta.iss_parameter_supported)
        if response.get("state") != state:
            raise AuthorizationError("the authorization response's state does not match")
        if "error" in response:
            raise OAuthError(response["error"], response.get("error_description"))
        code = response.get("code")
        if not code:
            raise AuthorizationError("the authorization response carries no code")
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.authorizer.redirect_uri,
            "code_verifier": pkce.verifier,
        }
        flow.scopes = scopes
        return await flow.token(identity, form)


def check_authorization_response(
    response: dict[str, str], expected_issuer: str, advertised: bool
) -> None:
    """RFC 9207 as the spec tabulates it (AUTH-14/15/16): a present `iss` must equal the
    recorded issuer exactly; an advertised one must be present. Checked before anything else
    in the response is looked at, `error` included."""
    iss = response.get("iss")
    if iss is not None:
        if iss != expected_issuer:
            raise AuthorizationError(
                f"the authorization response came from issuer {iss!r}, expected "
                f"{expected_issuer!r}: the code is not redeemed (mix-up defence)"
            )
    elif advertised:
        raise AuthorizationError(
            "the authorization server advertises the iss parameter but its response has none"
        )


@dataclass
class ClientCredentials(_Unattended):
    """The client's own token: `client_secret` (basic or post) or `private_key_pem`
    (`private_key_jwt`, signed with `signing_alg`)."""

    client_id: str
    client_secret: str | None = None
    private_key_pem: str | None = None
    signing_alg: str = "ES256"
    issuer: str | None = None

    def client_identity(self, meta: AuthServerMetadata) -> ClientIdentity:
        if self.issuer is not None and self.issuer != meta.issuer:
            raise AuthorizationError(f"these client credentials belong to {self.issuer}")
        if self.private_key_pem is not None:
            method = "private_key_jwt"
        elif self.client_secret is not None:
            method = _secret_method(meta)
        else:
            method = "none"
        return ClientIdentity(
            self.client_id,
            self.client_secret,
            method,
            meta.issuer,
            private_key_pem=self.private_key_pem,
            signing_alg=self.signing_alg,
        )

    async def obtain(self, flow: Flow) -> TokenSet:
        identity = self.client_identity(flow.meta)
        form = {"grant_type": "client_credentials", **flow.scope_param()}
        return await flow.token(identity, form)


@dataclass
class JwtBearer(_Unattended):
    """RFC 7523 §2.1: a JWT (e.g. a workload identity token) is the grant. Failures
    (`invalid_grant`, `invalid_scope`, `unauthorized_client`) are raised, never retried."""

    assertion: Secret
    client_id: str | None = None
    client_secret: str | None = None

    def client_identity(self, meta: AuthServerMetadata) -> ClientIdentity | None:
        if self.client_id is None:
            return None
        method = _secret_method(meta) if self.client_secret is not None else "none"
        return ClientIdentity(self.client_id, self.client_secret, method, meta.issuer)

    async def obtain(self, flow: Flow) -> TokenSet:
        identity = self.client_identity(flow.meta)
        form = {
            "grant_type": JWT_BEARER,
            "assertion": await _resolve(self.assertion),
            **flow.scope_param(),
        }
        return await flow.token(identity, form)


@dataclass
class EnterpriseManaged(_Unattended):
    """SEP-990: the user's IdP ID token is exchanged at the IdP for an Identity Assertion JWT
    Authorization Grant (RFC 8693, audience = the MCP authorization server, resource = the MCP
    server), which the client then presents as a JWT bearer grant (RFC 7523)."""

    client_id: str
    client_secret: str | None
    idp_token_endpoint: str
    id_token: Secret
    idp_client_id: str | None = None
    idp_client_secret: str | None = None

    async def exchange(self, flow: Flow) -> str:
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "subject_token": await _resolve(self.id_token),
            "subject_token_type": ID_TOKEN,
            "audience": flow.meta.issuer,
            "resource": flow.resource,
            **flow.scope_param(),
        }
        if self.idp_client_id is not None:
            form["client_id"] = self.idp_client_id
            if self.idp_client_secret is not None:
                form["client_secret"] = self.idp_client_secret
        status, data = await post_form(flow.http, self.idp_token_endpoint, form, {}, None)
        jag = data.get("access_token")
        if status != 200 or not isinstance(jag, str):
            raise OAuthError(
                str(data.get("error") or "token_exchange_failed"),
                str(data.get("error_description") or f"the IdP answered HTTP {status}"),
                status=status,
            )
        return jag

    def client_identity(self, meta: AuthServerMetadata) -> ClientIdentity:
        method = _secret_method(meta) if self.client_secret is not None else "none"
        return ClientIdentity(self.client_id, self.client_secret, method, meta.issuer)

    async def obtain(self, flow: Flow) -> TokenSet:
        jag = await self.exchange(flow)
        identity = self.client_identity(flow.meta)
        form = {"grant_type": JWT_BEARER, "assertion": jag, **flow.scope_param()}
        return await flow.token(identity, form)


if TYPE_CHECKING:  # every grant satisfies the protocol
    _grants: tuple[Grant, ...] = (
        AuthorizationCode(),
        ClientCredentials(""),
        JwtBearer(""),
        EnterpriseManaged("", None, "", ""),
    )
