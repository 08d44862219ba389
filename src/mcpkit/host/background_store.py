"""What the host keeps of its background calls: the `"background"` settings and the file of
task ids that outlives the process (TASK-09: a client SHOULD persist task ids durably).

    "host": {"background": {"after": 10, "tasks": "background-tasks.json"}}

- `after`: seconds a call the server runs as a task may hold the turn before it goes to the
  background (0: at once; `false`: never, the turn waits as before). Default 10.
- `tasks`: the file of background task ids (`mcpkit host` and `mcpkit ui` default it to
  `$XDG_STATE_HOME/mcpkit/background-tasks.json`; a `Host` without one keeps them in memory).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .paths import state_path, write_atomic

DEFAULT_AFTER_S = 10.0


def default_tasks_path() -> Path:
    return state_path("background-tasks.json")


@dataclass(frozen=True, slots=True)
class BackgroundSettings:
    #: Seconds before a task-backed call goes to the background; None: never.
    after: float | None = DEFAULT_AFTER_S
    #: The file of task ids (None: kept in memory only).
    tasks: Path | None = None

    @classmethod
    def parse(cls, value: Any, base: Path | None) -> BackgroundSettings:
        """The `"background"` object (ValueError says what is wrong)."""
        if value is None:
            return cls()
        if not isinstance(value, Mapping):
            raise ValueError('"background" must be an object: {"after": SECONDS}')
        unknown = set(value) - {"after", "tasks"}
        if unknown:
            raise ValueError(f'"background" has unknown keys {sorted(unknown)} (after, tasks)')
        after = value.get("after", DEFAULT_AFTER_S)
        if after is False:
            after = None
        elif isinstance(after, bool) or not isinstance(after, int | float) or after < 0:
            raise ValueError('"background.after" must be seconds ≥ 0, or false for never')
        tasks = value.get("tasks")
        if tasks is not None and (not isinstance(tasks, str) or not tasks):
            raise ValueError('"background.tasks" must be a file path')
        path = None if tasks is None else Path(tasks).expanduser()
        if path is not None and not path.is_absolute() and base is not None:
            path = base / path
        return cls(None if after is None else float(after), path)


@dataclass(slots=True)
class TaskEntry:
    """One background call's task, as persisted: enough to ask its server again."""

    task_id: str
    server: str
    alias: str
    tool: str
    call_id: str
    arguments: dict[str, Any] = field(default_factory=dict)
    agent: str | None = None
    started: float = field(default_factory=time.time)

    @classmethod
    def from_json(cls, data: Any) -> TaskEntry | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})
        except TypeError:
            return None


class TaskFile:
    """The persisted task ids of one agent (written whole, through a temporary file); no
    file: nothing is kept."""

    def __init__(self, path: Path | None, agent: str | None) -> None:
        self.path = path
        self.agent = agent

    def load(self) -> list[TaskEntry]:
        """This agent's entries (a missing or unreadable file: none)."""
        if self.path is None:
            return []
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return []
        rows = data.get("tasks") if isinstance(data, dict) else None
        entries = [TaskEntry.from_json(row) for row in rows or []]
        return [e for e in entries if e is not None and e.agent == self.agent]

    def save(self, entries: list[TaskEntry]) -> None:
        """This agent's entries now (other agents' are kept as they are)."""
        if self.path is None:
            return
        try:
            data = json.loads(self.path.read_text())
            rows = data.get("tasks") if isinstance(data, dict) else []
        except (OSError, ValueError):
            rows = []
        kept = [r for r in rows or [] if isinstance(r, dict) and r.get("agent") != self.agent]
        body = json.dumps({"tasks": kept + [asdict(e) for e in entries]}, indent=1)
        write_atomic(self.path, body.encode())
