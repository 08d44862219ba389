"""Tokens as the client holds them, and client identities bound to an authorization server."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

__all__ = ["ClientIdentity", "TokenSet"]


@dataclass(frozen=True, slots=True)
class TokenSet:
    """An access token (and maybe a refresh token) for one resource at one issuer."""

    access_token: str
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = None
    scope: tuple[str, ...] = ()
    resource: str | None = None

    @classmethod
    def from_response(
        cls, data: dict[str, Any], *, requested_scope: tuple[str, ...], resource: str | None
    ) -> TokenSet:
        """RFC 6749 §5.1. Without a `scope` in the response the requested one was granted."""
        token = data.get("access_token")
        if not isinstance(token, str) or not token:
            raise ValueError("the token response has no access_token")
        expires_in = data.get("expires_in")
        scope = data.get("scope")
        return cls(
            access_token=token,
            token_type=str(data.get("token_type") or "Bearer"),
            expires_at=time.time() + float(expires_in)
            if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool)
            else None,
            refresh_token=data.get("refresh_token")
            if isinstance(data.get("refresh_token"), str)
            else None,
            scope=tuple(scope.split()) if isinstance(scope, str) else requested_scope,
            resource=resource,
        )

    @property
    def is_dpop(self) -> bool:
        return self.token_type.lower() == "dpop"

    def expired(self, leeway: float = 30.0) -> bool:
        return self.expires_at is not None and time.time() + leeway >= self.expires_at

    def refreshed(self, newer: TokenSet) -> TokenSet:
        """A refresh response may omit the refresh token: keep the old one then."""
        if newer.refresh_token is None and self.refresh_token is not None:
            return replace(newer, refresh_token=self.refresh_token)
        return newer

    def to_json(self) -> dict[str, Any]:
        return _to_json(self, "scope")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TokenSet:
        return cls(**_from_json(data, "scope"))


@dataclass(frozen=True, slots=True)
class ClientIdentity:
    """Who the client is at one authorization server (AUTH-REG-07: keyed by its `issuer`).

    `auth_method` is the token endpoint authentication: `client_secret_basic`,
    `client_secret_post`, `none` or `private_key_jwt` (with `private_key_pem`).
    `issuer` None means portable (a Client ID Metadata Document URL)."""

    client_id: str
    client_secret: str | None = None
    auth_method: str = "none"
    issuer: str | None = None
    private_key_pem: str | None = field(default=None, repr=False)
    signing_alg: str = "ES256"
    redirect_uris: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return _to_json(self, "redirect_uris")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClientIdentity:
        return cls(**_from_json(data, "redirect_uris"))


def _to_json(record: TokenSet | ClientIdentity, listed: str) -> dict[str, Any]:
    """The record as a JSON object; its one tuple field (`listed`) as a list."""
    d = asdict(record)
    d[listed] = list(d[listed])
    return d


def _from_json(data: dict[str, Any], listed: str) -> dict[str, Any]:
    """`to_json`'s object as keyword arguments: the list back to a tuple (absent: empty)."""
    return {**data, listed: tuple(data.get(listed) or ())}
