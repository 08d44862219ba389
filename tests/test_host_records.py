"""The records of lazy servers (`host/records.py`): keyed by the server's config identity,
private ones kept to their principal (CACHE-11), written whole, holding nothing of the config;
`mcpkit tools` lists a lazy server from its record, and `--no-cache` keeps none; a resource read
starts a lazy server as a call does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from host_support import RecordingUI
from mcpkit.host import Host, parse_config
from mcpkit.host.config import ServerConfig
from mcpkit.host.conversation import AssistantMessage, Message, ToolCall, ToolResults, ToolSpec
from mcpkit.host.models.scripted import ScriptedModel
from mcpkit.host.records import Record, RecordStore
from support import ROOT, scaled

SERVER = str(ROOT / "tests/servers/lazy_server.py")
TOOLS = {"tools": [{"name": "ping", "inputSchema": {"type": "object"}}]}


def starts(folder: Path) -> int:
    """How many times server `a` started (lazy_server.py writes a marker each time)."""
    return sum(p.name.startswith("a-") for p in folder.iterdir())


def http(**changes: object) -> ServerConfig:
    entry = {
        "url": "https://example.com/mcp",
        "headers": {"Authorization": "Bearer sekrit-token"},
        **changes,
    }
    return parse_config({"mcpServers": {"a": entry}}).servers["a"]


def test_a_private_record_is_served_only_to_its_principal(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    store.save(http(), Record(time.time(), 60_000, "private", TOOLS, "alice"))
    mine = store.load(http(), "alice")
    assert mine is not None and mine.tools == TOOLS["tools"]
    assert store.load(http(), "bob") is None
    assert store.load(http()) is None  # nor to the host's own user
    store.save(http(), Record(time.time(), 60_000, "public", TOOLS))
    assert store.load(http(), "bob") is not None  # public: anyone (CACHE-10)


def test_a_changed_command_url_header_or_env_is_another_server(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    store.save(http(), Record(time.time(), 60_000, "public", TOOLS))
    assert store.load(http()) is not None
    assert store.load(http(url="https://example.com/other")) is None
    assert store.load(http(headers={"Authorization": "Bearer other"})) is None
    stdio = parse_config({"mcpServers": {"a": {"command": "x", "env": {"K": "1"}}}})
    store.save(stdio.servers["a"], Record(time.time(), 60_000, "public", TOOLS))
    changed = parse_config({"mcpServers": {"a": {"command": "x", "env": {"K": "2"}}}})
    assert store.load(changed.servers["a"]) is None


def test_a_record_is_written_whole_and_holds_nothing_of_the_config(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    store.save(http(), Record(time.time(), 60_000, "public", TOOLS))
    (written,) = tmp_path.iterdir()  # no temporary file left beside it
    assert "sekrit-token" not in written.read_text()
    assert "example.com" not in written.read_text()
    written.write_text('{"version": 1, "saved": ')  # cut short: ignored, listed again
    assert store.load(http()) is None


def test_mcpkit_tools_lists_a_lazy_server_from_its_record_and_no_cache_starts_it(
    tmp_path: Path,
) -> None:
    config = tmp_path / "fleet.json"
    entry = {"command": sys.executable, "args": [SERVER, str(tmp_path), "a"], "start": "lazy"}
    entry["trustNewTools"] = True  # listed as the model sees it: offered, not held
    config.write_text(json.dumps({"mcpServers": {"a": entry}}))
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}

    def tools(*flags: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "mcpkit", "tools", "-c", str(config), "--json", *flags]
        run = subprocess.run(
            argv, capture_output=True, text=True, env=env, timeout=scaled(90), check=False
        )
        assert run.returncode == 0, run.stderr
        assert [t["name"] for t in json.loads(run.stdout)] == ["a__ping"]
        return run

    tools()  # no record yet: started once to make one
    assert starts(tmp_path) == 1
    assert list((tmp_path / "state/mcpkit/servers").iterdir())
    listed = tools()
    assert starts(tmp_path) == 1  # listed from its record
    assert "not started: offered from its record" in listed.stderr
    tools("--no-cache")
    assert starts(tmp_path) == 2


async def test_reading_a_resource_of_a_lazy_server_starts_it(tmp_path: Path) -> None:
    entry = {"command": sys.executable, "args": [SERVER, str(tmp_path), "a"], "start": "lazy"}
    cfg = parse_config({"mcpServers": {"a": entry}})
    store = RecordStore(tmp_path / "records")
    listed = {**TOOLS, "resources": [{"uri": "lazy://note", "name": "note"}]}
    store.save(cfg.servers["a"], Record(time.time(), 60_000, "public", lists=listed))

    def read(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return AssistantMessage("", [ToolCall("r", "read_resource", {"uri": "lazy://note"})])

    def done(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return AssistantMessage("done")

    model = ScriptedModel([read, done])
    async with Host(cfg, model=model, ui=RecordingUI(), records=store) as host:
        assert host.fleet.links["a"].idle
        agent = host.agent()
        await agent.ask("read the note")
        assert host.fleet.links["a"].up
        result = next(m for m in agent.history if isinstance(m, ToolResults)).results[0]
        assert not result.is_error
        assert "a note from a" in json.dumps(result.content)
