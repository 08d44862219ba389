"""`IntrospectionVerifier`: opaque tokens checked at the authorization server (RFC 7662).

The resource server authenticates to the introspection endpoint (client_secret_basic), accepts
only `active` tokens whose `aud` names this resource (AUTH-22), and caches positive answers for
at most `cache_seconds` (never past the token's `exp`).
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterable, Mapping
from urllib.parse import quote

from ...protocol.auth_metadata import canonical_resource
from .access import AccessToken, InvalidToken
from .jwt_verifier import token_from_claims

__all__ = ["IntrospectionVerifier"]


class IntrospectionVerifier:
    def __init__(
        self,
        endpoint: str,
        *,
        audience: str | Iterable[str],
        client_id: str | None = None,
        client_secret: str | None = None,
        issuer: str | None = None,
        cache_seconds: float = 60.0,
        require_audience: bool = True,
        scope_implies: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        self.endpoint = endpoint
        audiences = [audience] if isinstance(audience, str) else list(audience)
        self.audiences = frozenset(canonical_resource(a) for a in audiences)
        self.client_id = client_id
        self.client_secret = client_secret
        self.issuer = issuer
        self.cache_seconds = cache_seconds
        self.require_audience = require_audience
        self.scope_implies = dict(scope_implies or {})
        self._cache: dict[str, tuple[float, AccessToken]] = {}

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self.client_id is not None and self.client_secret is not None:
            pair = f"{quote(self.client_id, safe='')}:{quote(self.client_secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        return headers

    async def verify(self, token: str) -> AccessToken:
        now = time.time()
        hit = self._cache.get(token)
        if hit is not None and hit[0] > now:
            return hit[1]
        import aiohttp

        form = {"token": token, "token_type_hint": "access_token"}
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http,
                http.post(self.endpoint, data=form, headers=self._headers()) as resp,
            ):
                status = resp.status
                data = await resp.json(content_type=None) if status == 200 else None
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            raise InvalidToken(f"token introspection failed: {exc}") from exc
        if status != 200 or not isinstance(data, dict) or data.get("active") is not True:
            raise InvalidToken("The access token is not active")
        if self.issuer is not None and data.get("iss") not in (None, self.issuer):
            raise InvalidToken("The access token comes from another issuer")
        exp = data.get("exp")
        if isinstance(exp, (int, float)) and exp < now:
            raise InvalidToken("The access token has expired")
        aud = data.get("aud")
        auds = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
        named = any(isinstance(a, str) and canonical_resource(a) in self.audiences for a in auds)
        if not named and (auds or self.require_audience):
            raise InvalidToken("The access token was not issued for this server")
        access = token_from_claims(data, token, self.scope_implies)
        until = now + self.cache_seconds
        if isinstance(exp, (int, float)):
            until = min(until, float(exp))
        if len(self._cache) > 10_000:
            self._cache = {k: v for k, v in self._cache.items() if v[0] > now}
        self._cache[token] = (until, access)
        return access
