"""Getting a client id: pre-registered, a Client ID Metadata Document URL, or Dynamic Client
Registration (RFC 7591), in that order (AUTH-REG-01)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

from ...protocol.auth_metadata import AuthServerMetadata
from ..errors import AuthorizationError, OAuthError
from .tokens import ClientIdentity

__all__ = ["ClientMetadata", "register_client"]


@dataclass(frozen=True, slots=True)
class ClientMetadata:
    """What the client says about itself (RFC 7591 §2), for DCR and for a CIMD document."""

    client_name: str = "mcpkit"
    redirect_uris: tuple[str, ...] = ("http://127.0.0.1:33418/callback",)
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    application_type: str = "native"  # AUTH-REG-05: loopback redirects, CLI, desktop
    client_uri: str | None = None
    scope: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def document(self, client_id: str, auth_method: str = "none") -> dict[str, Any]:
        """A Client ID Metadata Document to host at `client_id` (AUTH-REG-02)."""
        doc = self.registration(auth_method)
        doc["client_id"] = client_id
        return doc

    def registration(self, auth_method: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "client_name": self.client_name,
            "redirect_uris": list(self.redirect_uris),
            "grant_types": list(self.grant_types),
            "response_types": ["code"] if "authorization_code" in self.grant_types else [],
            "token_endpoint_auth_method": auth_method,
            "application_type": self.application_type,
        }
        if self.client_uri:
            body["client_uri"] = self.client_uri
        if self.scope:
            body["scope"] = self.scope
        body.update(self.extra)
        return body


def preferred_auth_method(meta: AuthServerMetadata, *, public: bool = True) -> str:
    """The method to ask for at registration: a public client prefers `none`."""
    supported = meta.token_endpoint_auth_methods_supported
    order = ("none", "client_secret_basic", "client_secret_post")
    if not public:
        order = ("client_secret_basic", "client_secret_post", "none")
    for method in order:
        if method in supported:
            return method
    return "client_secret_basic"


async def register_client(
    http: aiohttp.ClientSession, meta: AuthServerMetadata, client: ClientMetadata
) -> ClientIdentity:
    """RFC 7591 registration at `meta.registration_endpoint`; the identity is bound to the
    issuer (AUTH-REG-07). Rejections surface as `OAuthError` (AUTH-REG-06)."""
    if not meta.registration_endpoint:
        raise AuthorizationError(
            f"{meta.issuer} offers no client registration and no client id was configured"
        )
    method = preferred_auth_method(meta)
    body = orjson.dumps(client.registration(method))
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    async with http.post(meta.registration_endpoint, data=body, headers=headers) as resp:
        raw = await resp.read()
        status = resp.status
    try:
        data = orjson.loads(raw) if raw else {}
    except ValueError:
        data = {}
    if status not in (200, 201) or not isinstance(data, dict) or "client_id" not in data:
        err = data.get("error") if isinstance(data, dict) else None
        desc = data.get("error_description") if isinstance(data, dict) else None
        raise OAuthError(
            str(err or "registration_failed"),
            str(desc or f"client registration answered HTTP {status}"),
            status=status,
        )
    secret = data.get("client_secret") if isinstance(data.get("client_secret"), str) else None
    granted = data.get("token_endpoint_auth_method")
    if not isinstance(granted, str):
        granted = method if (secret or method == "none") else "none"
    return ClientIdentity(
        client_id=str(data["client_id"]),
        client_secret=secret,
        auth_method=granted,
        issuer=meta.issuer,
        redirect_uris=tuple(client.redirect_uris),
    )
