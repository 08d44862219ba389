"""`JWTVerifier`: JWT access tokens (RFC 9068) checked against the issuer's JWKS.

Signature, `iss`, `aud` (this resource: AUTH-22/25, AUTH-SEC-07), `exp` and `nbf` are checked
with joserfc; the key set is fetched with aiohttp, cached for `jwks_ttl` seconds and fetched
again (at most every `min_refresh` seconds) when a token names an unknown `kid` (key rotation).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from typing import Any

from joserfc import jwt
from joserfc.errors import ClaimError, InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet

from ...protocol.auth_metadata import canonical_resource
from .access import AccessToken, InvalidToken, expand_scopes

__all__ = ["JWTVerifier"]

DEFAULT_ALGORITHMS = ("RS256", "ES256", "PS256", "EdDSA", "ES384", "RS384", "RS512")


class JWTVerifier:
    """Verifies JWT access tokens issued by `issuer` for `audience` (the MCP server's resource
    URL). Keys: `jwks` (a JWK set dict, static) or `jwks_uri` (fetched and cached)."""

    def __init__(
        self,
        *,
        issuer: str,
        audience: str | Iterable[str],
        jwks_uri: str | None = None,
        jwks: Mapping[str, Any] | None = None,
        algorithms: Iterable[str] = DEFAULT_ALGORITHMS,
        leeway: float = 30.0,
        jwks_ttl: float = 3600.0,
        min_refresh: float = 30.0,
        scope_implies: Mapping[str, Iterable[str]] | None = None,
        require_exp: bool = True,
    ) -> None:
        if jwks is None and jwks_uri is None:
            raise ValueError("JWTVerifier needs jwks_uri or jwks")
        self.issuer = issuer
        audiences = [audience] if isinstance(audience, str) else list(audience)
        self.audiences = frozenset(canonical_resource(a) for a in audiences)
        self.jwks_uri = jwks_uri
        self.algorithms = list(algorithms)
        self.leeway = leeway
        self.jwks_ttl = jwks_ttl
        self.min_refresh = min_refresh
        self.scope_implies = dict(scope_implies or {})
        self._claims = jwt.JWTClaimsRegistry(
            leeway=int(leeway),
            iss={"essential": True, "value": issuer},
            exp={"essential": require_exp},
        )
        self._keys: KeySet | None = KeySet.import_key_set(dict(jwks)) if jwks else None  # type: ignore[arg-type]
        self._fetched_at = 0.0
        self._lock = asyncio.Lock()

    async def _key_set(self, force: bool = False) -> KeySet:
        now = time.monotonic()
        if self.jwks_uri is None:
            assert self._keys is not None
            return self._keys
        stale = self._keys is None or now - self._fetched_at > self.jwks_ttl
        if not (stale or (force and now - self._fetched_at > self.min_refresh)):
            assert self._keys is not None
            return self._keys
        async with self._lock:
            if self._keys is None or time.monotonic() - self._fetched_at > self.min_refresh:
                self._keys = await self._fetch()
                self._fetched_at = time.monotonic()
        return self._keys

    async def _fetch(self) -> KeySet:
        import aiohttp

        assert self.jwks_uri is not None
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http,
                http.get(self.jwks_uri) as resp,
            ):
                if resp.status != 200:
                    raise InvalidToken(f"the JWKS at {self.jwks_uri} answered HTTP {resp.status}")
                data = await resp.json(content_type=None)
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            if self._keys is not None:
                return self._keys  # keep serving with the keys we had
            raise InvalidToken(f"cannot fetch the JWKS: {exc}") from exc
        try:
            return KeySet.import_key_set(data)
        except (JoseError, ValueError, TypeError, KeyError) as exc:
            raise InvalidToken(f"the JWKS is invalid: {exc}") from exc

    async def verify(self, token: str) -> AccessToken:
        keys = await self._key_set()
        try:
            try:
                decoded = jwt.decode(token, keys, algorithms=self.algorithms)
            except InvalidKeyIdError:
                decoded = jwt.decode(
                    token, await self._key_set(force=True), algorithms=self.algorithms
                )
            claims = decoded.claims
            self._claims.validate(claims)
        except ClaimError as exc:
            raise InvalidToken(f"The access token is not acceptable: {exc.description}") from exc
        except (JoseError, ValueError, TypeError) as exc:
            raise InvalidToken("The access token could not be verified") from exc
        aud = claims.get("aud")
        auds = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
        if not any(isinstance(a, str) and canonical_resource(a) in self.audiences for a in auds):
            raise InvalidToken("The access token was not issued for this server")
        return token_from_claims(claims, token, self.scope_implies)


def token_from_claims(
    claims: Mapping[str, Any], token: str, implies: Mapping[str, Iterable[str]]
) -> AccessToken:
    """An `AccessToken` from JWT or introspection claims (`scope` string or `scp` list)."""
    raw = claims.get("scope")
    scopes: list[str] = raw.split() if isinstance(raw, str) else []
    scp = claims.get("scp")
    if isinstance(scp, list):
        scopes += [s for s in scp if isinstance(s, str)]
    aud = claims.get("aud")
    exp = claims.get("exp")
    sub = claims.get("sub")
    client = claims.get("client_id") or claims.get("azp")
    return AccessToken(
        subject=sub if isinstance(sub, str) else None,
        scopes=expand_scopes(scopes, implies),
        client_id=client if isinstance(client, str) else None,
        issuer=claims.get("iss") if isinstance(claims.get("iss"), str) else None,
        audience=(aud,)
        if isinstance(aud, str)
        else tuple(a for a in aud or () if isinstance(a, str)),
        expires_at=float(exp) if isinstance(exp, (int, float)) else None,
        claims=dict(claims),
        token=token,
    )
