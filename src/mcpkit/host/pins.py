"""Tool definition pinning: tool definitions from servers are untrusted data, so the host
offers a tool only in the definition the user approved, and withholds (quarantines) the rest
until the user approves them (`mcpkit pins diff|approve`, the chat's question, the web UI):

- a tool whose definition changed since it was pinned (the "rug pull": a harmless description
  swapped for one that instructs the model);
- a tool added or renamed on a pinned server, and the whole catalogue of a server seen for the
  first time (approved in one answer), unless the server's entry says `"trustNewTools": true`;
- a definition the `flag` hook holds for a reason of its own (content checks), even then.

The pin file (JSON) holds, per server and tool, the approved definition and its hash, plus the
definition awaiting approval (a new tool has only that), so that another process can show and
approve it:

    {"version": 2, "servers": {"shipping": {"track_parcel": {
        "hash": "…", "definition": {…}, "pending": {"hash": "…", "definition": {…}}},
        "echo_v2": {"pending": {"hash": "…", "definition": {…}, "reason": "…"}}}}}

Files from earlier versions (`{"server": {"tool": "hash"}}`) are read as pins without a stored
definition (their diff can only show the new one).
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .paths import state_path, write_atomic
from .screening import flag as content_flag

_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
Definition = dict[str, Any]
#: A raw tool definition -> why to hold it for the user's approval, or None (content checks).
Flag = Callable[[Definition], str | None]


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
    """A tool withheld until approved: its definition differs from its pin, or it has none."""

    server: str
    tool: str
    pinned: Definition | None  # None: new, or an old pin file kept only the hash
    current: Definition
    digest: str
    #: Never approved: new on its server (or renamed), or its server is seen for the first time.
    new: bool = False
    #: Why the `flag` hook holds this definition (None: it did not).
    reason: str | None = None

    @property
    def why(self) -> str:
        """What is withheld, completing "The tool 'x' of the 's' server ..."."""
        held = "is new (or renamed)" if self.new else "changed since it was pinned"
        return f"{held}; held for review: {self.reason}" if self.reason else held

    def diff(self) -> str:
        """A unified diff of the description and schemas, pinned → now (all new lines for a
        new tool)."""
        if self.new:
            before = []
        else:
            before = _view(self.pinned) if self.pinned else ["(definition not recorded)"]
        label = f"{self.server}/{self.tool}"
        lines = difflib.unified_diff(
            before,
            _view(self.current),
            f"{label} ({'new' if self.new else 'pinned'})",
            f"{label} (now)",
            lineterm="",
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
    digest: str | None  # None: never approved (new)
    pending: str | None


class ToolPins:
    """The pin file. `flag` holds a definition not yet approved for a reason of its own, even
    on a server whose additions are trusted: by default the content checks
    (`screening.flag`: instruction-like text, hidden characters); None turns that off.
    `read_only`: review and approve in memory only, never writing (or creating) the file:
    `mcpkit tools` shows what a host would hold."""

    def __init__(
        self, path: str | Path | None, *, flag: Flag | None = content_flag, read_only: bool = False
    ) -> None:
        self.path = Path(path).expanduser() if path is not None else None
        self.flag = flag
        self.read_only = read_only
        self._servers: dict[str, dict[str, dict[str, Any]]] = {}
        self._stamp: tuple[int, int] | None = None
        self._reported: set[tuple[str, str, str]] = set()
        #: Why the file could not be read; while set, it is never overwritten.
        self.error: str | None = None
        self._load()

    @property
    def writable(self) -> Path | None:
        """The file, unless this is a read-only view: what is kept beside the pins
        (provenance, sandbox packages) is not written beside a read-only view either."""
        return None if self.read_only else self.path

    # -- the host's view ---------------------------------------------------------------
    def review(self, server: str, tools: list[Definition], *, trust_new: bool = False) -> PinReview:
        """Offer the tools matching their pin; withhold and record the others (changed, new,
        flagged). `trust_new`: pin new tools on sight (the server's `trustNewTools`)."""
        self._load()
        known = self._servers.setdefault(server, {})
        review = PinReview()
        dirty = False
        for tool in tools:
            name, digest = tool["name"], tool_hash(tool)
            entry = known.setdefault(name, {})
            if entry.get("hash") == digest:
                dirty |= entry.pop("pending", None) is not None  # changed back: nothing to approve
                review.offered.append(tool)
                continue
            reason = self.flag(tool) if self.flag is not None else None
            if "hash" not in entry and trust_new and reason is None:
                known[name] = {"hash": digest, "definition": salient(tool)}
                dirty = True
                review.offered.append(tool)
                continue
            old, new = entry.get("definition"), "hash" not in entry
            change = PinChange(server, name, old, salient(tool), digest, new, reason)
            review.withheld.append(change)
            dirty |= _hold(entry, change)
            if (server, name, digest) not in self._reported:
                self._reported.add((server, name, digest))
                review.fresh.append(change)
        if dirty:
            self._save()
        return review

    def approved(self, server: str) -> bool:
        """Whether any tool of `server` was ever approved (False: first sight)."""
        self._load()
        return any("hash" in e for e in self._servers.get(server, {}).values())

    def pin(self, server: str, tools: list[Definition]) -> None:
        """Approve these definitions now: a server's catalogue when it is configured."""
        self._load()
        known = self._servers.setdefault(server, {})
        for tool in tools:
            known[tool["name"]] = {"hash": tool_hash(tool), "definition": salient(tool)}
        self._save()

    # -- the user's view (`mcpkit pins`, the chat prompt) -------------------------------------
    def entries(self) -> list[PinEntry]:
        self._load()
        return [
            PinEntry(server, tool, e.get("hash"), (e.get("pending") or {}).get("hash"))
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
                    new, why = "hash" not in e, p.get("reason")
                    old = e.get("definition")
                    out.append(PinChange(srv, name, old, p["definition"], p["hash"], new, why))
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
        if self.path is None or self.error is not None or self.read_only:
            return  # an unreadable pin file is never replaced by a fresh one (that re-pins all)
        data = {"version": 2, "servers": self._servers}
        write_atomic(self.path, json.dumps(data, indent=1, sort_keys=True).encode())
        st = self.path.stat()
        self._stamp = (st.st_mtime_ns, st.st_size)


def _parse(data: Any) -> dict[str, dict[str, dict[str, Any]]]:
    if not isinstance(data, dict):
        return {}
    if data.get("version") == 2 and isinstance(data.get("servers"), dict):
        return {
            s: {t: e for t, e in tools.items() if isinstance(e, dict) and _entry(e)}
            for s, tools in data["servers"].items()
            if isinstance(tools, dict)
        }
    # version 1: {"server": {"tool": "hash"}}
    return {
        s: {t: {"hash": h} for t, h in tools.items() if isinstance(h, str)}
        for s, tools in data.items()
        if isinstance(tools, dict)
    }


def _entry(e: dict[str, Any]) -> bool:
    """A pin (`hash`), a definition awaiting approval (`pending`), or both."""
    pending = e.get("pending")
    return "hash" in e or (isinstance(pending, dict) and "hash" in pending)


def _hold(entry: dict[str, Any], change: PinChange) -> bool:
    """Record `change` as awaiting approval in its pin entry; True when the entry changed."""
    pending: dict[str, Any] = {"hash": change.digest, "definition": change.current}
    if change.reason is not None:
        pending["reason"] = change.reason
    if entry.get("pending") == pending:
        return False
    entry["pending"] = pending
    return True


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
