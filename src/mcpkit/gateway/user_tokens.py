"""Where the gateway keeps each front user's tokens for `perUser` backends: one record per
(user, backend, authorization server), encrypted at rest with Fernet (`cryptography`: AES-128
in CBC with an HMAC-SHA256, never hand-written), in memory or in Redis so that several gateway
instances, and a restarted one, share them.

    "gateway": {"userTokens": {"key": "${MCPKIT_GATEWAY_TOKEN_KEY}", "redis": "redis://..."}}

The key is a Fernet key (`Fernet.generate_key()`); without one (memory only) each process
makes its own. Redis keys name no user: `<prefix>gateway-tokens:<sha256 of the record's name>`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Protocol

import orjson

from ..client.auth.token_store import IssuerRecord
from ..host.config import ConfigError


class _Bytes(Protocol):
    async def get(self, name: str) -> bytes | None: ...

    async def set(self, name: str, value: bytes) -> None: ...

    async def close(self) -> None: ...


class _Memory:
    def __init__(self) -> None:
        self._values: dict[str, bytes] = {}

    async def get(self, name: str) -> bytes | None:
        return self._values.get(name)

    async def set(self, name: str, value: bytes) -> None:
        self._values[name] = value

    async def close(self) -> None:
        return None


class _Redis:
    def __init__(self, url: str, prefix: str) -> None:
        from ..server.redis_config import RedisConfig

        self.config = RedisConfig(url, prefix)

    async def get(self, name: str) -> bytes | None:
        value = await self.config.client().get(self.config.key("gateway-tokens", name))
        return bytes(value) if value is not None else None

    async def set(self, name: str, value: bytes) -> None:
        await self.config.client().set(self.config.key("gateway-tokens", name), value)

    async def close(self) -> None:
        await self.config.close()


class SealedTokens:
    """Token records, encrypted, one per (principal, backend, issuer)."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        from cryptography.fernet import Fernet

        key = settings.get("key")
        try:
            self._fernet = Fernet(key if isinstance(key, str) else Fernet.generate_key())
        except ValueError:
            raise ConfigError(
                '"gateway.userTokens.key" is not a Fernet key (32 bytes, URL-safe base64): make '
                "one with python -c 'from cryptography.fernet import Fernet; "
                "print(Fernet.generate_key().decode())'"
            ) from None
        url = settings.get("redis")
        self._values: _Bytes = (
            _Redis(str(url), str(settings.get("prefix") or "mcpkit:")) if url else _Memory()
        )

    async def close(self) -> None:
        await self._values.close()

    def of(self, principal: str, backend: str) -> UserTokenStore:
        """The `TokenStore` of one user at one backend (what that user's `OAuth` keeps)."""
        return UserTokenStore(self, principal, backend)

    async def load(self, name: str) -> IssuerRecord | None:
        from cryptography.fernet import InvalidToken

        sealed = await self._values.get(name)
        if sealed is None:
            return None
        try:
            data = orjson.loads(self._fernet.decrypt(sealed))
        except (InvalidToken, ValueError):
            return None  # another key, or damaged: the user authorizes again
        return IssuerRecord.from_json(data) if isinstance(data, dict) else None

    async def save(self, name: str, record: IssuerRecord) -> None:
        await self._values.set(name, self._fernet.encrypt(orjson.dumps(record.to_json())))


class UserTokenStore:
    """`TokenStore` for one principal and backend, over `SealedTokens`."""

    def __init__(self, sealed: SealedTokens, principal: str, backend: str) -> None:
        self._sealed = sealed
        self._who = [principal, backend]

    def _name(self, issuer: str) -> str:
        return hashlib.sha256(orjson.dumps([*self._who, issuer])).hexdigest()

    async def load(self, issuer: str) -> IssuerRecord | None:
        return await self._sealed.load(self._name(issuer))

    async def save(self, issuer: str, record: IssuerRecord) -> None:
        await self._sealed.save(self._name(issuer), record)
