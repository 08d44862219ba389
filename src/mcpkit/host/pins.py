"""Tool definition pinning: tool definitions from servers are untrusted data, so the host
remembers a hash of each and warns when one changes between sessions (rug pulls)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import orjson

_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


def tool_hash(tool: dict[str, Any]) -> str:
    salient = {k: tool.get(k) for k in _FIELDS}
    return hashlib.sha256(orjson.dumps(salient, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


class ToolPins:
    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._pins: dict[str, dict[str, str]] = {}
        if self.path is not None and self.path.is_file():
            try:
                self._pins = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                self._pins = {}

    def check(self, server: str, tools: list[dict[str, Any]]) -> list[str]:
        """Warnings for tools whose definition changed since they were pinned; pins new ones."""
        known = self._pins.setdefault(server, {})
        warnings = []
        for tool in tools:
            digest = tool_hash(tool)
            old = known.get(tool["name"])
            if old is None:
                known[tool["name"]] = digest
            elif old != digest:  # kept pinned to the old definition until accepted
                warnings.append(
                    f"server {server!r} changed the definition of tool {tool['name']!r} "
                    "since it was pinned; review it, then accept the change"
                )
        self._save()
        return warnings

    def accept(self, server: str, tools: list[dict[str, Any]]) -> None:
        """Pin the current definitions (after the user reviewed a change)."""
        self._pins.setdefault(server, {}).update({t["name"]: tool_hash(t) for t in tools})
        self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self._pins, indent=1, sort_keys=True), encoding="utf-8")
