"""What a verified access token says, and how the server side talks about it. No I/O.

`current_access` holds the `AccessToken` of the request being served: the transport sets it
(HTTP from the `Authorization` header on every request, stdio once from the environment) and
the dispatcher reads it, so the caller's identity always comes from the token (never from
arguments) and sealed `requestState` is bound to it (MRTR-10).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...protocol.errors import INVALID_REQUEST, MCPError

__all__ = [
    "AccessToken",
    "InsufficientScope",
    "InvalidToken",
    "TokenVerifier",
    "current_access",
    "expand_scopes",
    "require_scopes",
]


@dataclass(frozen=True, slots=True)
class AccessToken:
    """A verified token: who (`subject`, `client_id`), what (`scopes`), and every claim."""

    subject: str | None
    scopes: frozenset[str] = frozenset()
    client_id: str | None = None
    issuer: str | None = None
    audience: tuple[str, ...] = ()
    expires_at: float | None = None
    claims: Mapping[str, Any] = field(default_factory=dict)
    token: str = field(default="", repr=False)

    @property
    def principal(self) -> str | None:
        """The caller: the subject, else (client credentials) the client id."""
        return self.subject if self.subject is not None else self.client_id

    def has_scopes(self, required: Collection[str]) -> bool:
        return all(s in self.scopes for s in required)

    def claim(self, name: str) -> Any:
        if name == "sub":
            return self.subject
        if name == "client_id":
            return self.client_id
        if name == "scope":
            return " ".join(sorted(self.scopes))
        return self.claims.get(name)


class InvalidToken(Exception):
    """The token is missing, malformed, expired, not ours or revoked: HTTP 401 (AUTH-23)."""

    def __init__(self, description: str = "The access token is invalid") -> None:
        super().__init__(description)
        self.description = description


class InsufficientScope(MCPError):
    """The token lacks a scope the operation needs: HTTP 403 with an `insufficient_scope`
    challenge naming all of them (AUTH-29/30)."""

    code = INVALID_REQUEST
    http_status = 403
    default_message = "Forbidden: insufficient scope"

    def __init__(self, required: Iterable[str], message: str | None = None) -> None:
        self.required = tuple(sorted(set(required)))
        super().__init__(
            message or f"Forbidden: this needs scope {' '.join(self.required)}",
            {"requiredScopes": list(self.required)},
        )


class TokenVerifier(Protocol):
    """Checks one bearer token; raises `InvalidToken` when it must be refused."""

    async def verify(self, token: str) -> AccessToken: ...


#: The access token of the request being served (None: unauthenticated).
current_access: ContextVar[AccessToken | None] = ContextVar("mcpkit_access", default=None)


def expand_scopes(scopes: Iterable[str], implies: Mapping[str, Iterable[str]]) -> frozenset[str]:
    """The granted scopes plus everything they imply, transitively (AUTH-33)."""
    out: set[str] = set()
    todo = list(scopes)
    while todo:
        scope = todo.pop()
        if scope in out:
            continue
        out.add(scope)
        todo.extend(implies.get(scope, ()))
    return frozenset(out)


def current_principal() -> str | None:
    """The caller of the request being served, from its verified token; None unauthenticated."""
    access = current_access.get()
    return access.principal if access is not None else None


def require_scopes(required: frozenset[str]) -> AccessToken | None:
    """Raise `InsufficientScope` unless the current token holds every scope in `required`."""
    access = current_access.get()
    if required and (access is None or not required <= access.scopes):
        raise InsufficientScope(required)
    return access
