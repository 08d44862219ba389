"""Token endpoint requests: client authentication (RFC 6749 §2.3, RFC 7523 §2.2), DPoP proofs
with the nonce retry (RFC 9449 §5, §8), and OAuth error responses (RFC 6749 §5.2)."""

from __future__ import annotations

import base64
import secrets
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import aiohttp
import orjson

if TYPE_CHECKING:
    from joserfc import jwk

    from .dpop import DPoPKey

from ...protocol.auth_metadata import AuthServerMetadata
from ..errors import AuthorizationError, OAuthError
from .tokens import ClientIdentity, TokenSet

__all__ = ["client_assertion", "post_form", "request_token"]

JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def client_assertion(identity: ClientIdentity, audience: str) -> str:
    """A `private_key_jwt` assertion: iss = sub = client_id, aud = the AS issuer (RFC 7523)."""
    from joserfc import jwt  # loaded only for private_key_jwt

    if identity.private_key_pem is None:
        raise AuthorizationError("private_key_jwt needs the client's private key")
    key = _import_key(identity.private_key_pem, identity.signing_alg)
    now = int(time.time())
    claims = {
        "iss": identity.client_id,
        "sub": identity.client_id,
        "aud": audience,
        "iat": now,
        "exp": now + 300,
        "jti": secrets.token_urlsafe(16),
    }
    alg = identity.signing_alg
    return jwt.encode({"alg": alg, "typ": "JWT"}, claims, key, algorithms=[alg])


def _import_key(pem: str, alg: str) -> jwk.ECKey | jwk.RSAKey | jwk.OKPKey:
    from joserfc import jwk

    if alg.startswith("ES"):
        return jwk.import_key(pem, "EC")
    if alg.startswith(("RS", "PS")):
        return jwk.import_key(pem, "RSA")
    if alg == "EdDSA":
        return jwk.import_key(pem, "OKP")
    raise AuthorizationError(f"unsupported signing algorithm {alg!r}")


def authenticate(
    identity: ClientIdentity, meta: AuthServerMetadata, form: dict[str, str]
) -> dict[str, str]:
    """Add client authentication to `form`; return the extra HTTP headers it needs."""
    method = identity.auth_method
    if method == "client_secret_basic" and identity.client_secret is not None:
        pair = f"{quote(identity.client_id, safe='')}:{quote(identity.client_secret, safe='')}"
        return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
    form["client_id"] = identity.client_id
    if method == "client_secret_post" and identity.client_secret is not None:
        form["client_secret"] = identity.client_secret
    elif method == "private_key_jwt":
        form["client_assertion_type"] = JWT_BEARER_ASSERTION
        form["client_assertion"] = client_assertion(identity, meta.issuer)
    return {}


async def post_form(
    http: aiohttp.ClientSession,
    url: str,
    form: dict[str, str],
    headers: dict[str, str],
    dpop: DPoPKey | None,
) -> tuple[int, dict[str, Any]]:
    """POST a form; with DPoP, a proof per attempt and one retry on `use_dpop_nonce` (§8)."""
    for attempt in range(2):
        h = {"Accept": "application/json", **headers}
        if dpop is not None:
            h["DPoP"] = dpop.proof("POST", url)
        async with http.post(url, data=form, headers=h) as resp:
            status = resp.status
            raw = await resp.read()
            nonce = resp.headers.get("DPoP-Nonce")
        try:
            data = orjson.loads(raw) if raw else {}
        except ValueError:
            data = {}
        if not isinstance(data, dict):
            data = {}
        fresh = dpop is not None and dpop.remember_nonce(url, nonce)
        if (
            attempt == 0
            and fresh
            and status in (400, 401)
            and data.get("error") == "use_dpop_nonce"
        ):
            continue
        return status, data
    raise AssertionError("unreachable")


async def request_token(
    http: aiohttp.ClientSession,
    meta: AuthServerMetadata,
    identity: ClientIdentity | None,
    form: dict[str, str],
    *,
    dpop: DPoPKey | None = None,
    requested_scope: tuple[str, ...] = (),
    resource: str | None = None,
) -> TokenSet:
    """One token request; errors are raised as `OAuthError`, never retried (except the DPoP
    nonce), so a failed grant is surfaced as is (SEP-1933)."""
    if not meta.token_endpoint:
        raise AuthorizationError(f"{meta.issuer} has no token endpoint")
    form = dict(form)
    headers = authenticate(identity, meta, form) if identity is not None else {}
    status, data = await post_form(http, meta.token_endpoint, form, headers, dpop)
    if status != 200 or "access_token" not in data:
        raise OAuthError(
            str(data.get("error") or "invalid_response"),
            str(data.get("error_description") or f"token endpoint answered HTTP {status}"),
            status=status,
        )
    return TokenSet.from_response(data, requested_scope=requested_scope, resource=resource)
