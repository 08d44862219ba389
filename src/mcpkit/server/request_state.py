"""Sealed `requestState` for multi round-trip requests (MRTR-07..11).

The state is hostile input (MRTR-08): it is sealed with AES-256-GCM under a key set (the first
key seals, every key opens: rotation), and binds the method, a digest of the request's salient
params, the principal and an expiry (MRTR-10). No server storage is needed; single use is an
explicit opt-in through a `StateStore` (MRTR-11).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import time
from collections.abc import Iterable
from typing import Any, Protocol

import orjson

from ..protocol.errors import InvalidParams
from .ownership import Owner, same_owner

_PREFIX = "mk1."
_AAD = b"mcpkit/requestState/v1"
KEYS_ENV = "MCPKIT_STATE_KEYS"


class StateStore(Protocol):
    """Remembers used state ids for single-use state (MRTR-11)."""

    async def consume(self, state_id: str, ttl_seconds: float) -> bool:
        """True the first time `state_id` is seen within `ttl_seconds`, False afterwards."""
        ...


class MemoryStateStore:
    """Single-use state for one process (use a shared store, e.g. Redis, for several)."""

    def __init__(self) -> None:
        self._seen: dict[str, float] = {}

    async def consume(self, state_id: str, ttl_seconds: float) -> bool:
        now = time.monotonic()
        if len(self._seen) > 10_000:
            self._seen = {k: v for k, v in self._seen.items() if v > now}
        if self._seen.get(state_id, 0.0) > now:
            return False
        self._seen[state_id] = now + ttl_seconds
        return True


def _decode_key(key: bytes | str) -> bytes:
    raw = key if isinstance(key, bytes) else base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))
    if len(raw) != 32:
        raise ValueError("requestState keys are 32 bytes (AES-256-GCM)")
    return raw


def generate_key() -> str:
    """A new key, base64url, for `Server(state_keys=[...])` or MCPKIT_STATE_KEYS."""
    return base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")


def salient_digest(method: str, params: dict[str, Any]) -> str:
    """What a retry must repeat: the tool/prompt name and arguments, or the resource URI."""
    if method == "resources/read":
        salient: Any = params.get("uri")
    else:
        salient = [params.get("name"), params.get("arguments") or {}]
    data = orjson.dumps([method, salient], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(data).hexdigest()[:32]


class StateSealer:
    """Seals and opens request states. Keys from the argument, else MCPKIT_STATE_KEYS, else random."""

    def __init__(
        self, keys: Iterable[bytes | str] | None = None, *, ttl_seconds: float = 600.0
    ) -> None:
        key_list = list(keys) if keys is not None else []
        if not key_list and os.environ.get(KEYS_ENV):
            key_list = [k.strip() for k in os.environ[KEYS_ENV].split(",") if k.strip()]
        self.ephemeral = not key_list
        raw = [_decode_key(k) for k in key_list] or [os.urandom(32)]
        self._raw = [(hashlib.sha256(k).digest()[:4], k) for k in raw]
        self._aeads: list[tuple[bytes, Any]] | None = None  # AES-GCM objects, built on first use
        self.ttl_seconds = ttl_seconds

    def _keys(self) -> list[tuple[bytes, Any]]:
        # `cryptography` loads when the first state is sealed or opened, not at import.
        if self._aeads is None:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            self._aeads = [(kid, AESGCM(key)) for kid, key in self._raw]
        return self._aeads

    def seal(self, payload: dict[str, Any]) -> str:
        kid, aead = self._keys()[0]
        body = dict(payload)
        body["exp"] = int(time.time() + self.ttl_seconds)
        nonce = os.urandom(12)
        body["j"] = base64.urlsafe_b64encode(nonce).decode()  # the state's id: its unique nonce
        blob = kid + nonce + aead.encrypt(nonce, orjson.dumps(body), _AAD)
        return _PREFIX + base64.urlsafe_b64encode(blob).decode().rstrip("=")

    def open(self, token: Any, *, method: str, digest: str, owner: Owner) -> dict[str, Any]:
        """The payload, or -32602 for anything tampered, expired, foreign or for another request."""
        if not isinstance(token, str) or not token.startswith(_PREFIX):
            raise _bad("requestState is not one this server issued")
        try:
            data = token[len(_PREFIX) :]
            blob = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
        except (binascii.Error, ValueError):
            raise _bad("requestState is malformed") from None
        if len(blob) < 4 + 12 + 16:
            raise _bad("requestState is truncated")
        kid, nonce, sealed = blob[:4], blob[4:16], blob[16:]
        for key_id, aead in self._keys():
            if key_id == kid:
                try:
                    payload: dict[str, Any] = orjson.loads(aead.decrypt(nonce, sealed, _AAD))
                except (_invalid_tag(), orjson.JSONDecodeError):
                    raise _bad("requestState failed its integrity check") from None
                break
        else:
            raise _bad("requestState was sealed with an unknown key")
        if payload.get("exp", 0) < time.time():
            raise _bad("requestState has expired; start the request again")
        if payload.get("m") != method or payload.get("d") != digest:
            raise _bad("requestState belongs to a different request")
        if not same_owner(payload.get("p"), owner):
            raise _bad("requestState belongs to a different principal")
        return payload


def _invalid_tag() -> type[Exception]:
    from cryptography.exceptions import InvalidTag

    return InvalidTag


def _bad(why: str) -> InvalidParams:
    return InvalidParams(f"Invalid params: {why}")
