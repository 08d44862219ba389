"""Tool definition pinning: tool definitions from servers are untrusted data, so the host pins
each one the first time it sees it, and withholds a tool whose definition later changes (the
"rug pull": a harmless description swapped for one that instructs the model) until the user
approves the change (`mcpkit pins diff|approve`, or the prompt in the interactive chat).

The pin file (JSON) holds, per server and tool, the approved definition and its hash, plus the
changed definition awaiting approval, so that another process can show and approve it:

    {"version": 2, "servers": {"shipping": {"track_parcel": {
        "hash": "…", "definition": {…}, "pending": {"hash": "…", "definition": {…}}}}}}

Files from earlier versions (`{"server": {"tool": "hash"}}`) are read as pins without a stored
definition (their diff can only show the new one).
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .paths import state_path

_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
Definition = dict[str, Any]


def default_pins_path() -> Path:
    return state_path("tool-pins.json")


#: MCP Apps: which interface a tool has and who may call it (a tool for apps only turned
#: visible to the model is a change like any other). Pinned only where present, so the pins of
#: tools without it keep their hash.
_UI_KEY, _UI_FIELDS = "_meta.ui", ("resourceUri", "visibility")


def _ui(tool: Definition) -> Definition:
    meta = tool.get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    return {k: ui[k] for k in _UI_FIELDS if k in ui} if isinstance(ui, dict) else {}


def salient(tool: Definition) -> Definition:
    """The parts of a tool definition that are pinned."""
    picked = {k: tool[k] for k in _FIELDS if k in tool}
    if _UI_KEY in tool or _ui(tool):
        picked[_UI_KEY] = tool.get(_UI_KEY) or _ui(tool)
    return picked


def tool_hash(tool: Definition) -> str:
    picked = {k: tool.get(k) for k in _FIELDS}
    ui = tool.get(_UI_KEY) or _ui(tool)
    if ui:
        picked[_UI_KEY] = ui
    return hashlib.sha256(orjson.dumps(picked, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class PinChange:
    """A tool whose definition differs from its pin: withheld until approved."""

    server: str
    tool: str
    pinned: Definition | None  # None: an old pin file kept only the hash
    current: Definition
    digest: str

    def diff(self) -> str:
        """A unified diff of the description and schemas, pinned → now."""
        before = _view(self.pinned) if self.pinned is not None else ["(definition not recorded)"]
        label = f"{self.server}/{self.tool}"
        lines = difflib.unified_diff(
            before, _view(self.current), f"{label} (pinned)", f"{label} (now)", lineterm=""
        )
        return "\n".join(lines)


@dataclass(slots=True)
class PinReview:
    offered: list[Definition] = field(default_factory=list)
    withheld: list[PinChange] = field(default_factory=list)
    #: Changes this `ToolPins` had not reported before (warn once per change).
    fresh: list[PinChange] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class PinEntry:
    server: str
    tool: str
    digest: str
    pending: str | None


class ToolPins:
    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path).expanduser() if path is not None else None
        self._servers: dict[str, dict[str, dict[str, Any]]] = {}
        self._stamp: tuple[int, int] | None = None
        self._reported: set[tuple[str, str, str]] = set()
        #: Why the file could not be read; while set, it is never overwritten.
        self.error: str | None = None
        self._load()

    # -- the host's view ---------------------------------------------------------------
    def review(self, server: str, tools: list[Definition]) -> PinReview:
        """Pin tools seen for the first time; offer those matching their pin; withhold and
        record the changed ones."""
        self._load()
        known = self._servers.setdefault(server, {})
        review = PinReview()
        dirty = False
        for tool in tools:
            name, digest = tool["name"], tool_hash(tool)
            entry = known.get(name)
            if entry is None:
                known[name] = {"hash": digest, "definition": salient(tool)}
                dirty = True
            elif entry["hash"] == digest:
                dirty |= entry.pop("pending", None) is not None  # changed back: nothing to approve
            else:
                change = PinChange(server, name, entry.get("definition"), salient(tool), digest)
                review.withheld.append(change)
                if (entry.get("pending") or {}).get("hash") != digest:
                    entry["pending"] = {"hash": digest, "definition": salient(tool)}
                    dirty = True
                if (server, name, digest) not in self._reported:
                    self._reported.add((server, name, digest))
                    review.fresh.append(change)
                continue
            review.offered.append(tool)
        if dirty:
            self._save()
        return review

    # -- the user's view (`mcpkit pins`, the chat prompt) -------------------------------------
    def entries(self) -> list[PinEntry]:
        self._load()
        return [
            PinEntry(server, tool, e["hash"], (e.get("pending") or {}).get("hash"))
            for server, tools in sorted(self._servers.items())
            for tool, e in sorted(tools.items())
        ]

    def pending(self, server: str | None = None, tool: str | None = None) -> list[PinChange]:
        """Recorded changes awaiting approval."""
        self._load()
        out = []
        for srv, tools in sorted(self._servers.items()):
            for name, e in sorted(tools.items()):
                wanted = (server is None or srv == server) and (tool is None or name == tool)
                if wanted and e.get("pending"):
                    p = e["pending"]
                    out.append(
                        PinChange(srv, name, e.get("definition"), p["definition"], p["hash"])
                    )
        return out

    def approve(
        self, server: str, tool: str | None = None, digest: str | None = None
    ) -> list[PinChange]:
        """Pin the pending definitions of a server (or one tool; `digest` makes sure it is
        the change the user saw). Returns what was approved."""
        approved = [c for c in self.pending(server, tool) if digest is None or c.digest == digest]
        for change in approved:
            self._servers[server][change.tool] = {
                "hash": change.digest,
                "definition": change.current,
            }
        if approved:
            self._save()
        return approved

    # -- the file ----------------------------------------------------------------------
    def _load(self) -> None:
        """(Re)read the file when it changed on disk: another process may have approved."""
        if self.path is None:
            return
        try:
            st = self.path.stat()
        except OSError:
            return
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._stamp:
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            self.error = f"{self.path}: {exc}"
            return
        self._stamp, self.error = stamp, None
        self._servers = _parse(data)

    def _save(self) -> None:
        if self.path is None or self.error is not None:
            return  # an unreadable pin file is never replaced by a fresh one (that re-pins all)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"version": 2, "servers": self._servers}
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".pins-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, self.path)  # readers never see half a file
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        st = self.path.stat()
        self._stamp = (st.st_mtime_ns, st.st_size)


def _parse(data: Any) -> dict[str, dict[str, dict[str, Any]]]:
    if not isinstance(data, dict):
        return {}
    if data.get("version") == 2 and isinstance(data.get("servers"), dict):
        return {
            s: {t: e for t, e in tools.items() if isinstance(e, dict) and "hash" in e}
            for s, tools in data["servers"].items()
            if isinstance(tools, dict)
        }
    # version 1: {"server": {"tool": "hash"}}
    return {
        s: {t: {"hash": h} for t, h in tools.items() if isinstance(h, str)}
        for s, tools in data.items()
        if isinstance(tools, dict)
    }


def _view(definition: Definition) -> list[str]:
    lines = []
    for key in (*_FIELDS[1:], _UI_KEY):
        if key not in definition:
            continue
        value = definition[key]
        lines.append(f"{key}:")
        text = value if isinstance(value, str) else json.dumps(value, indent=2, sort_keys=True)
        lines += ["  " + line for line in text.splitlines()] or ["  "]
    return lines
