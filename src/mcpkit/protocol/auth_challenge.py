"""`WWW-Authenticate` challenges (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1): parse and build.

No I/O: the resource server builds its 401/403 challenges here and the client parses them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["Challenge", "build_challenge", "parse_challenges"]

_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


@dataclass(frozen=True, slots=True)
class Challenge:
    """One challenge: `scheme` as sent, `params` with lower-cased names."""

    scheme: str
    params: Mapping[str, str] = field(default_factory=dict)
    token68: str | None = None

    def get(self, name: str) -> str | None:
        return self.params.get(name.lower())

    @property
    def scope(self) -> list[str]:
        value = self.get("scope")
        return value.split() if value else []

    @property
    def error(self) -> str | None:
        return self.get("error")

    @property
    def resource_metadata(self) -> str | None:
        return self.get("resource_metadata")


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self, chars: str = " \t") -> None:
        while self.pos < len(self.text) and self.text[self.pos] in chars:
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def token(self) -> str:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] in _TCHAR:
            self.pos += 1
        return self.text[start : self.pos]

    def quoted(self) -> str:
        self.pos += 1  # opening quote
        out: list[str] = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            self.pos += 1
            if ch == "\\" and self.pos < len(self.text):
                out.append(self.text[self.pos])
                self.pos += 1
            elif ch == '"':
                break
            else:
                out.append(ch)
        return "".join(out)


def parse_challenges(headers: Iterable[str] | str) -> list[Challenge]:
    """Every challenge in one or more `WWW-Authenticate` values; malformed parts are skipped."""
    values = [headers] if isinstance(headers, str) else list(headers)
    out: list[Challenge] = []
    for value in values:
        out.extend(_parse_one(value))
    return out


def _parse_one(value: str) -> list[Challenge]:
    r = _Reader(value)
    out: list[Challenge] = []
    scheme: str | None = None
    params: dict[str, str] = {}
    token68: str | None = None

    def flush() -> None:
        if scheme:
            out.append(Challenge(scheme, dict(params), token68))

    while True:
        r.skip(" \t,")
        if not r.peek():
            break
        start = r.pos
        name = r.token()
        if not name:
            r.pos += 1  # not a token character: skip it
            continue
        r.skip()
        if r.peek() == "=" and scheme is not None:
            r.pos += 1
            r.skip()
            if r.peek() == "=":  # token68 padding after a bare scheme, e.g. "abc=="
                while r.peek() == "=":
                    r.pos += 1
                token68 = value[start : r.pos].strip()
                continue
            val = r.quoted() if r.peek() == '"' else r.token()
            params.setdefault(name.lower(), val)
            continue
        # A new challenge starts with a scheme not followed by "=".
        flush()
        scheme, params, token68 = name, {}, None
    flush()
    return out


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def build_challenge(scheme: str, params: Mapping[str, str | None]) -> str:
    """`Bearer error="...", scope="...", resource_metadata="..."`; None values are left out."""
    parts = [f"{name}={_quote(value)}" for name, value in params.items() if value is not None]
    return scheme + (" " + ", ".join(parts) if parts else "")
