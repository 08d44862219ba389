"""Keeping the gateway's users apart. Backends see the gateway's credential, so whatever a
backend binds to its caller is, to the backend, the gateway's. The gateway binds it to the
front caller instead:

- values the config derives per caller: `{sub}`, `{client_id}`, `{claim.NAME}` in
  `hostOwned` values and `userHeaders` (`"Authorization": "Bearer tok-{sub}"`), filled from
  the front token of each call (`render`);
- state handles (`HandleScope`): a backend's mcpkit-shaped handle (`kind_` + 24 URL-safe
  characters) in a result reaches the front as a handle of the gateway's own, bound to the
  front caller; a handle in a call's arguments is swapped back only for the caller it was
  issued to. Another caller's (or an unknown) handle goes to the backend as it is, where it
  names nothing (the backend answers as for any unknown handle);
- tasks are the gateway's own (bound to the front caller by its task store), requestState is
  sealed by the gateway for the front caller (MRTR-10), and idempotency keys are derived per
  caller (`forward.py`).
"""

from __future__ import annotations

import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from ..server.auth.access import AccessToken

_FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_]+(?:\.[A-Za-z0-9_:.-]+)?)\}")
#: mcpkit's handle shape (`mcpkit.server.handles`), not inside a longer word.
HANDLE = re.compile(r"(?<![A-Za-z0-9_-])([a-z][a-z0-9_]{0,31})_[A-Za-z0-9_-]{24}(?![A-Za-z0-9_-])")
_WHOLE = re.compile(r"^([a-z][a-z0-9_]{0,31})_[A-Za-z0-9_-]{24}$")


class TemplateError(ValueError):
    """A per-caller value cannot be made for this caller (no token, or no such claim)."""


def is_template(value: Any) -> bool:
    return isinstance(value, str) and _FIELD.search(value) is not None


def render(template: str, access: AccessToken | None) -> str:
    """`template` with `{sub}`, `{client_id}` and `{claim.NAME}` from the caller's token
    (`{{` and `}}` are literal braces)."""

    def field(m: re.Match[str]) -> str:
        whole, name = m.group(0), m.group(1)
        if name is None:
            return whole[0]
        if access is None:
            raise TemplateError(f"{{{name}}} needs a signed-in caller")
        claim = name.split(".", 1)[1] if name.startswith("claim.") else name
        if claim not in ("sub", "client_id") and not name.startswith("claim."):
            raise TemplateError(f"unknown field {{{name}}} (sub, client_id, claim.NAME)")
        value = access.claim(claim)
        if value is None:
            raise TemplateError(f"the caller's token has no {claim!r} claim")
        return str(value)

    return _FIELD.sub(field, template)


def render_all(values: Mapping[str, Any], access: AccessToken | None) -> dict[str, Any]:
    return {k: render(v, access) if isinstance(v, str) else v for k, v in values.items()}


class HandleScope:
    """The gateway's handles: front handle ↔ (caller, backend handle), with a lifetime."""

    def __init__(
        self,
        ttl: float = 24 * 3600,
        max_handles: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self.max_handles = max_handles
        self.clock = clock
        self._front: OrderedDict[str, tuple[str | None, str, float]] = OrderedDict()
        self._back: dict[tuple[str | None, str], str] = {}

    def __len__(self) -> int:
        return len(self._front)

    def wrap(self, value: Any, principal: str | None) -> Any:
        """A result (any JSON value) with the backend's handles replaced by the caller's."""
        if isinstance(value, str):
            if "_" not in value or len(value) < 26:
                return value
            return HANDLE.sub(lambda m: self._issue(m.group(0), m.group(1), principal), value)
        if isinstance(value, list):
            return [self.wrap(v, principal) for v in value]
        if isinstance(value, dict):
            return {k: self.wrap(v, principal) for k, v in value.items()}
        return value

    def unwrap(self, value: Any, principal: str | None) -> Any:
        """Arguments with the caller's own handles replaced by the backend's."""
        if isinstance(value, str):
            if _WHOLE.match(value) is None:
                return value
            entry = self._front.get(value)
            if entry is None or entry[0] != principal or entry[2] <= self.clock():
                return value
            return entry[1]
        if isinstance(value, list):
            return [self.unwrap(v, principal) for v in value]
        if isinstance(value, dict):
            return {k: self.unwrap(v, principal) for k, v in value.items()}
        return value

    def _issue(self, backend: str, kind: str, principal: str | None) -> str:
        now = self.clock()
        known = self._back.get((principal, backend))
        if known is not None:
            entry = self._front.get(known)
            if entry is not None and entry[2] > now:
                self._front[known] = (principal, backend, now + self.ttl)
                self._front.move_to_end(known)
                return known
        front = f"{kind}_{secrets.token_urlsafe(18)}"
        self._front[front] = (principal, backend, now + self.ttl)
        self._back[(principal, backend)] = front
        while len(self._front) > self.max_handles:
            _, (owner, old, _) = self._front.popitem(last=False)
            self._back.pop((owner, old), None)
        return front
