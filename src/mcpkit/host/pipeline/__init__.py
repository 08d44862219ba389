"""One call pipeline: every tool call from any front end (the agent loop, the web UI's
inspector and MCP Apps, the gateway) goes through one chain of small policies.

- `record`: the contract: the `Call` record, its `Outcome`, `Policy`, `chain()`.
- one module per policy: `resolve`, `host_owned`, `pins`, `consent`, `hook`, `budget`,
  `audit`, `telemetry`, `present`, `failures`, `retry`, `attempt`, `deadline`; `send` ends it.
- `events`: typed events on a bus the terminal, the web UI and the log subscribe to.
- `assemble`: the chain each front end runs (`for_agent`, `for_inspector`).
"""

from __future__ import annotations

from .assemble import Pipeline, for_agent, for_inspector, sending
from .events import (
    AuditRecorded,
    CallDecided,
    CallFinished,
    CallProgress,
    CallRefused,
    Event,
    EventBus,
    to_ui,
)
from .record import Call, Next, Outcome, Policy, chain

__all__ = [
    "AuditRecorded",
    "Call",
    "CallDecided",
    "CallFinished",
    "CallProgress",
    "CallRefused",
    "Event",
    "EventBus",
    "Next",
    "Outcome",
    "Pipeline",
    "Policy",
    "chain",
    "for_agent",
    "for_inspector",
    "sending",
    "to_ui",
]
