"""Who decides whether a tool call runs: a policy, and the user (GEN-01/03, TOOL-01/02/12).

Rules come from three places, as `allow` / `ask` / `deny` glob lists:

- the host (`ConsentPolicy(allow=..., ask=..., deny=...)`, `mcpkit host --allow`), and
- the agent (`"agents": {"support": {"consent": {...}}}`), both matching the model's name
  for the tool (`shipping__track_parcel`, so `shipping__*` works);
- the server entry (`"mcpServers": {"shipping": {"consent": {...}}}`), matching the tool's
  own name (`track_parcel`).

The strictest matching rule wins, wherever it is written: deny, then ask, then allow. An
"allow for this session" answer counts like an allow rule that no ask rule overrides (deny
still wins). Without a matching rule, annotations count only for servers marked trusted; a
tool from an untrusted server is always asked about; destructive and open-world tools ask
(their hints default to true when absent, per the schema). A non-interactive policy denies
whatever would ask.
"""

from __future__ import annotations

import enum
import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
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


@dataclass(frozen=True, slots=True)
class Ruling:
    """A decision and who made it (for the audit trail): `host`, `agent` or `server` rules,
    `session` (an earlier "allow for this session"), `annotations`, `untrusted`, `user`,
    `non-interactive`, `app` (the user's answer for the MCP App making the call, given once
    when it was rendered), or `host-owned` (the host refused a field the model may not set)."""

    decision: Decision
    by: str


@dataclass(frozen=True, slots=True)
class ConsentRules:
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    def match(self, name: str) -> Decision | None:
        """The strictest rule matching `name`, or None."""
        for decision, patterns in (
            (Decision.DENY, self.deny),
            (Decision.ASK, self.ask),
            (Decision.ALLOW, self.allow),
        ):
            if _match(patterns, name):
                return decision
        return None

    def __bool__(self) -> bool:
        return bool(self.allow or self.ask or self.deny)

    @classmethod
    def parse(cls, value: Any) -> ConsentRules:
        """`{"allow": [...], "ask": [...], "deny": [...]}` (ValueError says what is wrong)."""
        if value is None:
            return cls()
        if not isinstance(value, Mapping):
            raise ValueError('"consent" must be an object with "allow", "ask" and "deny" lists')
        unknown = set(value) - {"allow", "ask", "deny"}
        if unknown:
            raise ValueError(f'"consent" has unknown keys {sorted(unknown)} (allow, ask, deny)')
        lists: dict[str, tuple[str, ...]] = {}
        for key in ("allow", "ask", "deny"):
            patterns = value.get(key) or []
            if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
                raise ValueError(f'"consent.{key}" must be a list of tool name patterns')
            lists[key] = tuple(patterns)
        return cls(**lists)


def _match(patterns: Iterable[str], name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


@dataclass
class ConsentPolicy:
    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    #: Servers whose sampling requests the host's model may answer.
    allow_sampling: list[str] = field(default_factory=list)
    #: Rules of each server's config entry, matching the tool's own name.
    servers: dict[str, ConsentRules] = field(default_factory=dict)
    #: Rules of the agent in use, matching the model's name for the tool.
    agent: ConsentRules = field(default_factory=ConsentRules)
    #: False: nobody can answer, so what would ask is denied.
    interactive: bool = True
    #: Tools (model names) the user allowed for the rest of this session.
    granted: set[str] = field(default_factory=set)

    def judge(self, call: PendingCall) -> Ruling:
        layers = (
            (
                "host",
                ConsentRules(tuple(self.allow), tuple(self.ask), tuple(self.deny)),
                call.alias,
            ),
            ("agent", self.agent, call.alias),
            ("server", self.servers.get(call.server, ConsentRules()), call.tool),
        )
        found = [(rules.match(name), by) for by, rules, name in layers]
        for decision in (Decision.DENY, Decision.ASK, Decision.ALLOW):
            if decision is Decision.ASK and call.alias in self.granted:
                return Ruling(Decision.ALLOW, "session")
            by = next((who for d, who in found if d is decision), None)
            if by is not None:
                return self._asking(Ruling(decision, by))
        if not call.trusted:
            return self._asking(Ruling(Decision.ASK, "untrusted"))
        hints = call.annotations
        if hints.get("readOnlyHint") is True:
            return Ruling(Decision.ALLOW, "annotations")
        if hints.get("destructiveHint", True) or hints.get("openWorldHint", True):
            return self._asking(Ruling(Decision.ASK, "annotations"))
        return Ruling(Decision.ALLOW, "annotations")

    def _asking(self, ruling: Ruling) -> Ruling:
        if ruling.decision is Decision.ASK and not self.interactive:
            return Ruling(Decision.DENY, "non-interactive")
        return ruling

    def decide(self, call: PendingCall) -> Decision:
        return self.judge(call).decision

    def grant(self, call: PendingCall) -> None:
        """The user allowed this tool for the rest of the session."""
        self.granted.add(call.alias)

    def for_agent(self, rules: ConsentRules) -> ConsentPolicy:
        """This policy with an agent's rules, and a session of its own."""
        return replace(self, agent=rules, granted=set())

    def may_sample(self, server: str) -> bool:
        return _match(self.allow_sampling, server)
