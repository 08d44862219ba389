"""What a cassette leaves out: secrets in headers, in messages and in the recorded environment.

A name (an object key, a header, an environment variable) that matches a rule has its string
value replaced by `[REDACTED]`. Each value so removed, and the value of every secret-named
environment variable, is also cut out of every other string: a token a tool echoes in its
result, an API key the server prints. Rules are shell-style patterns, case-insensitive:
`DEFAULT_RULES` plus the user's (`mcpkit record --redact`, `MCPKIT_REDACT`). No I/O.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["DEFAULT_RULES", "REDACTED", "Redactor", "rules_from_env"]

DEFAULT_RULES = (
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "*token*",
    "*key*",
    "*secret*",
    "*password*",
)
REDACTED = "[REDACTED]"
#: Protocol fields whose names match a rule but hold no secret; replay needs them as they were.
NOT_SECRET = frozenset({"progresstoken", "maxtokens", "dev.mcpkit/idempotencykey"})
#: Shorter values are not cut out of other strings ("1", "true" would go everywhere).
MIN_SECRET = 6
#: Environment variables every process has: not recorded.
_AMBIENT = re.compile(
    r"(PATH|HOME|USER|LOGNAME|SHELL|PWD|OLDPWD|SHLVL|TERM|TERM_\w*|COLORTERM|LANG|LANGUAGE|LC_\w*"
    r"|TZ|TMPDIR|TMP|TEMP|HOSTNAME|DISPLAY|SSH_\w*|XDG_\w*|_|MAIL|EDITOR|PAGER|LS_COLORS|LESS\w*"
    r"|VIRTUAL_ENV|PYTHON\w*|PYTEST_\w*|MCPKIT_TEST_\w*|NODE_OPTIONS)"
)


def rules_from_env(environ: Mapping[str, str]) -> list[str]:
    """`MCPKIT_REDACT`: more rules, comma-separated."""
    return [rule for rule in environ.get("MCPKIT_REDACT", "").split(",") if rule.strip()]


class Redactor:
    """Redacts JSON values, headers and environments by the rules; remembers each secret it
    removed, so that the same value is cut out wherever it appears later."""

    def __init__(self, rules: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> None:
        extra = [rule.strip().lower() for rule in rules if rule.strip()]
        self.rules = tuple(dict.fromkeys([*DEFAULT_RULES, *extra]))
        self._names = re.compile("|".join(fnmatch.translate(rule) for rule in self.rules))
        self._secrets: list[str] = []
        for name, value in (environ or {}).items():
            if self.secret_name(name):
                self._learn(value)

    def secret_name(self, name: str) -> bool:
        lowered = name.lower()
        return lowered not in NOT_SECRET and self._names.match(lowered) is not None

    def value(self, value: Any) -> Any:
        """`value` with its secrets redacted (a new value; `value` is left as it was)."""
        if isinstance(value, str):
            return self._cut(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for name, item in value.items():
                if isinstance(item, str) and item and self.secret_name(name):
                    self._learn(item)
                    out[name] = REDACTED
                else:
                    out[name] = self.value(item)
            return out
        return value

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        out = {}
        for name, value in headers.items():
            if self.secret_name(name):
                self._learn(value)
                self._learn(value.partition(" ")[2])  # `Bearer <token>`: the token alone too
                out[name] = REDACTED
            else:
                out[name] = self._cut(value)
        return out

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The environment as a cassette records it: secret-named values redacted, the
        variables every process has left out."""
        return {
            name: REDACTED if self.secret_name(name) else self._cut(value)
            for name, value in sorted(environ.items())
            if not _AMBIENT.fullmatch(name)
        }

    def _learn(self, value: str) -> None:
        if len(value) >= MIN_SECRET and value != REDACTED and value not in self._secrets:
            self._secrets.append(value)
            self._secrets.sort(key=len, reverse=True)  # the longest first: no half-cut secret

    def _cut(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text
