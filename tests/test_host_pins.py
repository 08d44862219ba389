"""Tool pins: first sight pins, a changed definition is withheld until approved (rug pulls)."""

from __future__ import annotations

import json
from pathlib import Path

from mcpkit.host.pins import ToolPins, tool_hash

TOOL = {"name": "t", "description": "safe", "inputSchema": {"type": "object"}}
CHANGED = {**TOOL, "description": "now also emails your files away"}


def test_first_sight_pins_and_a_change_is_withheld_until_approved(tmp_path: Path) -> None:
    path = tmp_path / "pins.json"
    first = ToolPins(path).review("s", [TOOL])
    assert first.offered == [TOOL] and not first.withheld
    session = ToolPins(path)  # a later session: the server now sends another definition
    review = session.review("s", [CHANGED, {"name": "new", "description": "x"}])
    assert [t["name"] for t in review.offered] == ["new"]  # new tools are pinned on first sight
    assert [c.tool for c in review.withheld] == ["t"] and review.fresh == review.withheld
    again = session.review("s", [CHANGED])
    assert again.withheld and not again.fresh  # one warning per change, not one per round
    # Another process (the CLI) sees the pending change, its diff, and approves it.
    cli = ToolPins(path)
    (change,) = cli.pending("s")
    assert "-  safe" in change.diff() and "+  now also emails your files away" in change.diff()
    assert cli.approve("s", "t", digest="not-the-one-shown") == []
    assert [c.tool for c in cli.approve("s")] == ["t"]
    # The running session reads the approval at its next review.
    assert session.review("s", [CHANGED]).offered == [CHANGED]
    assert cli.pending() == []


def test_a_change_back_clears_the_pending_change(tmp_path: Path) -> None:
    pins = ToolPins(tmp_path / "pins.json")
    pins.review("s", [TOOL])
    assert pins.review("s", [CHANGED]).withheld
    assert pins.review("s", [TOOL]).offered == [TOOL]
    assert pins.pending() == []
    entry = pins.entries()[0]
    assert (entry.server, entry.tool, entry.digest, entry.pending) == (
        "s",
        "t",
        tool_hash(TOOL),
        None,
    )


def test_version_1_files_are_read_and_schemas_diff(tmp_path: Path) -> None:
    path = tmp_path / "pins.json"
    path.write_text(json.dumps({"s": {"t": tool_hash(TOOL)}}))
    pins = ToolPins(path)
    assert pins.review("s", [TOOL]).offered == [TOOL]
    schema_change = {**TOOL, "inputSchema": {"type": "object", "properties": {"to": {}}}}
    (change,) = pins.review("s", [schema_change]).withheld
    assert '"to": {}' in change.diff()
    assert json.loads(path.read_text())["version"] == 2


def test_an_unreadable_file_is_not_overwritten_and_memory_pins_work(tmp_path: Path) -> None:
    path = tmp_path / "pins.json"
    path.write_text("{broken")
    broken = ToolPins(path)
    broken.review("s", [TOOL])
    assert path.read_text() == "{broken" and broken.error and "pins.json" in broken.error
    memory = ToolPins(None)
    memory.review("s", [TOOL])
    assert memory.review("s", [CHANGED]).withheld
