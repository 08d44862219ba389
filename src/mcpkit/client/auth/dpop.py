"""DPoP (RFC 9449), client side: one key per client, a fresh proof per HTTP request, and the
nonces servers hand out (§8 at the authorization server, §9 at the resource server).

Signing and JWK handling are joserfc's; this module only assembles the claims.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from urllib.parse import urlsplit, urlunsplit

from joserfc import jwt
from joserfc.jwk import ECKey

from .pkce import b64url

__all__ = ["DPoPKey", "htu_of"]


def htu_of(url: str) -> str:
    """The `htu` claim: the request URL without query and fragment (RFC 9449 §4.2)."""
    p = urlsplit(url)
    return urlunsplit((p.scheme, p.netloc, p.path, "", ""))


class DPoPKey:
    """An ES256 key pair; `proof()` signs one DPoP proof JWT with the public key in its header."""

    alg = "ES256"

    def __init__(self, key: ECKey | None = None) -> None:
        self._key = key or ECKey.generate_key("P-256")
        self.public_jwk = self._key.as_dict(private=False)
        self.thumbprint = self._key.thumbprint()
        self._nonces: dict[str, str] = {}  # origin → latest DPoP-Nonce

    def proof(
        self, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None
    ) -> str:
        claims: dict[str, object] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": htu_of(url),
            "iat": int(time.time()),
        }
        nonce = nonce if nonce is not None else self._nonces.get(_origin(url))
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:  # §4.2: hash of the token a resource request carries
            claims["ath"] = b64url(hashlib.sha256(access_token.encode("ascii")).digest())
        header = {"typ": "dpop+jwt", "alg": self.alg, "jwk": self.public_jwk}
        return jwt.encode(header, claims, self._key, algorithms=[self.alg])

    def remember_nonce(self, url: str, nonce: str | None) -> bool:
        """Keep a server's `DPoP-Nonce`; True when it is new (a retry may help)."""
        if not nonce:
            return False
        origin = _origin(url)
        if self._nonces.get(origin) == nonce:
            return False
        self._nonces[origin] = nonce
        return True


def _origin(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}".lower()
