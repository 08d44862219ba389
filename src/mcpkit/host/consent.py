"""Who decides whether a tool call runs: a policy, and the user (GEN-01/03, TOOL-01/02/12).

Rules from configuration win (deny, then allow, then ask; patterns like `shipping__*`).
Otherwise annotations count only for servers marked trusted; a tool from an untrusted server
is always asked about. Destructive and open-world tools ask by default (their hints default
to true when absent, per the schema).
"""

from __future__ import annotations

import enum
import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


class Decision(enum.Enum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A call the model asked for, as the host shows it to the user."""

    alias: str
    server: str
    tool: str
    arguments: dict[str, Any]
    annotations: dict[str, Any]
    trusted: bool
    call_id: str = ""


@dataclass
class ConsentPolicy:
    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    #: Servers whose sampling requests the host's model may answer.
    allow_sampling: list[str] = field(default_factory=list)

    @staticmethod
    def _match(patterns: Iterable[str], alias: str) -> bool:
        return any(fnmatch.fnmatchcase(alias, p) for p in patterns)

    def decide(self, call: PendingCall) -> Decision:
        if self._match(self.deny, call.alias):
            return Decision.DENY
        if self._match(self.allow, call.alias):
            return Decision.ALLOW
        if self._match(self.ask, call.alias) or not call.trusted:
            return Decision.ASK
        hints = call.annotations
        if hints.get("readOnlyHint") is True:
            return Decision.ALLOW
        if hints.get("destructiveHint", True) or hints.get("openWorldHint", True):
            return Decision.ASK
        return Decision.ALLOW

    def may_sample(self, server: str) -> bool:
        return self._match(self.allow_sampling, server)
