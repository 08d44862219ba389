"""The audit trail: one JSON line per tool call the model asked for, appended to a file.

    {"time": "2026-12-01T09:30:12.104Z", "agent": "support", "server": "returns",
     "tool": "create_return", "call": "toolu_01", "arguments": "sha256:5f1c…",
     "decision": "allow", "by": "user", "outcome": "ok", "duration_ms": 412.7, "error": null,
     "key": "mcpkit-0c8e…", "attempts": 2}

`arguments` is a digest (SHA-256 of canonical JSON) of the arguments the model gave, before
the host adds host-owned values: the log can show which call was made without storing what was
in it (a digest of a short value can be guessed, so it attests, it does not hide). `by` says who decided (see
`consent.Ruling`). `outcome` is `ok`, `tool-error` (the tool reported a failure), `error`
(no result: refused, unreachable, protocol error), `timeout`, `unknown` (the connection failed
after the call may have reached the server, and repeating it was not safe) or `denied`. `key`
is the call's idempotency key (sent with every attempt) and `attempts` how many times it was
sent (0: never, as for a denied call; over 1: retried, see `retry.py`). Opt in with
`"host": {"audit": "PATH"}` in the config or `mcpkit host --audit PATH`; read it with
`mcpkit audit`. Lines are appended with one write each (O_APPEND), so several hosts may share
a file; the file is created readable by its owner only.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from .paths import state_path


def default_audit_path() -> Path:
    return state_path("audit.jsonl")


def digest(arguments: Any) -> str:
    canonical = orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return "sha256:" + hashlib.sha256(canonical).hexdigest()


@dataclass(slots=True)
class AuditRecord:
    time: str
    agent: str | None
    server: str
    tool: str
    call: str
    arguments: str
    decision: str = ""
    by: str = ""
    outcome: str = ""
    duration_ms: float = 0.0
    error: str | None = None
    #: Who called, behind `mcpkit gateway` (the front token's principal); None in a host.
    principal: str | None = None
    key: str | None = None
    attempts: int = 0


class CallAudit:
    """One call being recorded: `decided(...)`, then `finished(...)` writes the line."""

    def __init__(self, log: AuditLog | None, record: AuditRecord) -> None:
        self.log = log
        self.record = record
        self._start = time.perf_counter()

    def decided(self, decision: str, by: str) -> None:
        self.record.decision, self.record.by = decision, by

    def finished(
        self, outcome: str, error: str | None = None, *, key: str | None = None, attempts: int = 0
    ) -> None:
        self.record.outcome, self.record.error = outcome, error
        self.record.key, self.record.attempts = key, attempts
        self.record.duration_ms = round((time.perf_counter() - self._start) * 1000, 1)
        if self.log is not None:
            self.log.write(self.record)


class AuditLog:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()

    def write(self, record: AuditRecord) -> None:
        line = orjson.dumps(asdict(record)) + b"\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


def start_audit(
    log: AuditLog | None,
    agent: str | None,
    server: str,
    tool: str,
    call: str,
    arguments: Any,
    principal: str | None = None,
) -> CallAudit:
    """A recorder for one call; with no log it writes nothing (the record is still made:
    the call pipeline publishes it as an event)."""
    record = AuditRecord(_now(), agent, server, tool, call, digest(arguments), principal=principal)
    return CallAudit(log, record)


def read_audit(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of an audit file, oldest first; lines that do not parse are skipped."""
    with open(Path(path).expanduser(), "rb") as f:
        for line in f:
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(record, dict):
                yield record


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
