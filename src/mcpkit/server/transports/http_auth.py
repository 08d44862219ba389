"""The resource-server side of the Streamable HTTP app: token check, challenges, and the
Protected Resource Metadata document. Used only when the app has `auth` (nothing otherwise)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from ..auth.access import InsufficientScope, current_access
from ..auth.resource import AuthFailure

if TYPE_CHECKING:
    from ...protocol.errors import MCPError
    from ..auth.resource import BearerAuth

Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


async def _send(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *headers,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def authenticate(auth: BearerAuth, authorization: str | None, send: Send) -> bool:
    """Verify the request's token and make it the request's `current_access`; otherwise answer
    401/403 with the challenge (AUTH-23, AUTH-28) and return False."""
    try:
        current_access.set(await auth.authenticate(authorization))
    except AuthFailure as failure:
        challenge = [(b"www-authenticate", failure.challenge.encode())]
        await _send(send, failure.status, failure.body(), challenge)
        return False
    return True


def scope_challenge(auth: BearerAuth, exc: MCPError) -> bytes:
    """AUTH-29: `error="insufficient_scope"` and every scope the call needs."""
    required = exc.required if isinstance(exc, InsufficientScope) else ()
    return auth.insufficient(required, exc.message).challenge.encode()


async def send_metadata(auth: BearerAuth, method: str, send: Send) -> None:
    """RFC 9728 §3: the Protected Resource Metadata, public (no token needed)."""
    if method not in ("GET", "HEAD"):
        await _send(send, 405, b'{"error":"method_not_allowed"}', [(b"allow", b"GET")])
        return
    cache = [(b"cache-control", b"public, max-age=3600"), (b"access-control-allow-origin", b"*")]
    await _send(send, 200, auth.metadata_body, cache)
