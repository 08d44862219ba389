"""One call pipeline: every tool call from any front end (the agent loop, the web UI's
inspector and MCP Apps, the gateway) goes through one chain of small policies.

- `record`: the contract: the `Call` record, its `Outcome`, `Policy`, `chain()`.
- one module per policy: `resolve`, `host_owned`, `pins`, `consent`, `hook`, `budget`, `screen`,
  `audit`, `telemetry`, `present`, `failures`, `retry`, `attempt`, `deadline`; `send` ends it.
- events (`host.events`, re-exported here): typed events on a bus the terminal and the web UI
  subscribe to.
- `assemble`: the chain each front end runs (`for_agent`, `for_inspector`, `for_gateway`).

Front ends (the web UI, the gateway) import from here only: the policies' own modules and the
host modules behind them (`host.consent`, `host.pins`, `host.audit`, `host.hooks`) are the
pipeline's (`.importlinter` says so). The data types they need are re-exported here.
"""

from __future__ import annotations

from ..audit import AuditLog, AuditRecord, read_audit
from ..consent import ConsentPolicy, ConsentRules, Decision, PendingCall, Ruling
from ..events import (
    AuditRecorded,
    BackgroundEnded,
    CallAllowed,
    CallBackgrounded,
    CallDecided,
    CallFinished,
    CallProgress,
    CallRefused,
    CallSent,
    ContentScreened,
    Event,
    EventBus,
    to_ui,
)
from ..pins import ToolPins
from ..supervision import StateChange
from .assemble import Pipeline, for_agent, for_gateway, for_inspector, sending
from .consent import Consent, refusals
from .record import Call, Next, Outcome, Policy, Refused, chain

__all__ = [
    "AuditLog",
    "AuditRecord",
    "AuditRecorded",
    "BackgroundEnded",
    "Call",
    "CallAllowed",
    "CallBackgrounded",
    "CallDecided",
    "CallFinished",
    "CallProgress",
    "CallRefused",
    "CallSent",
    "Consent",
    "ConsentPolicy",
    "ConsentRules",
    "ContentScreened",
    "Decision",
    "Event",
    "EventBus",
    "Next",
    "Outcome",
    "PendingCall",
    "Pipeline",
    "Policy",
    "Refused",
    "Ruling",
    "StateChange",
    "ToolPins",
    "chain",
    "for_agent",
    "for_gateway",
    "for_inspector",
    "read_audit",
    "refusals",
    "sending",
    "to_ui",
]
