"""Who owns a per-caller object, and the one rule for whether a caller may use it.

Everything bound to a caller records `current_owner()` when it is made: 2025-11-25 sessions,
tasks, and sealed `requestState`. Every later operation on it (a session's POST, GET and
DELETE; `tasks/get|update|cancel`; the `taskIds` a listen stream follows; an MRTR retry) asks
`same_owner(owner, current_owner())`, and answers another caller's object exactly like an
unknown one, so its existence is not revealed.

The owner is the verified token's principal (its subject, else its client id). A verified
token that names neither gets a key of its own (a digest of the token), so two such callers
never share anything. Without auth every caller is the same anonymous one (None): a
single-tenant server.
"""

from __future__ import annotations

import hashlib

from .auth.access import current_access

#: An owner key: a principal, `token:<digest>` for a token without one, None without auth.
Owner = str | None


def current_owner() -> Owner:
    """The owner key of the request being served (from its verified token only)."""
    access = current_access.get()
    if access is None:
        return None
    principal = access.principal
    if principal is not None:
        return principal
    return "token:" + hashlib.sha256(access.token.encode()).hexdigest()[:32]


def same_owner(owner: Owner, caller: Owner) -> bool:
    """Whether `caller` may use an object made by `owner`."""
    return owner == caller


def owned(owner: Owner) -> bool:
    """Whether the caller of the request being served may use an object made by `owner`."""
    return same_owner(owner, current_owner())
