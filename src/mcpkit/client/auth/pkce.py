"""PKCE (RFC 7636) with S256, the only method MCP clients use (AUTH-SEC-03)."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass

__all__ = ["Pkce", "b64url", "s256"]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def s256(verifier: str) -> str:
    """`BASE64URL(SHA256(ascii(verifier)))` (RFC 7636 §4.2)."""
    return b64url(hashlib.sha256(verifier.encode("ascii")).digest())


@dataclass(frozen=True, slots=True)
class Pkce:
    verifier: str
    challenge: str
    method: str = "S256"

    @classmethod
    def generate(cls) -> Pkce:
        verifier = b64url(secrets.token_bytes(48))  # 64 characters of [A-Za-z0-9_-]
        return cls(verifier, s256(verifier))
