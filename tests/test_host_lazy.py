"""Servers started on first use (`"start": "lazy"`), stopped when idle (`idleTimeout`), offered
meanwhile from the record of their last start, kept across runs (`host/records.py`, CACHE-*).
Every server is a real process (tests/servers/lazy_server.py) that writes a marker file as it
starts: the markers count the starts."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from host_support import RecordingUI
from mcpkit.host import Host, HostConfig, HostSettings, load_config, parse_config
from mcpkit.host.conversation import AssistantMessage, Message, ToolCall, ToolResults, ToolSpec
from mcpkit.host.instructions import with_instructions
from mcpkit.host.lazy import LazyLink
from mcpkit.host.models.scripted import ScriptedModel
from mcpkit.host.pins import ToolPins
from mcpkit.host.records import Record, RecordStore
from mcpkit.host.supervision import LinkState
from support import ROOT, scaled

SERVER = str(ROOT / "tests/servers/lazy_server.py")
PING = {
    "name": "ping",
    "description": "Echo the text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string", "default": ""}}},
}


def config(folder: Path, names: list[str], **entry: Any) -> HostConfig:
    servers = {
        n: {"command": sys.executable, "args": [SERVER, str(folder), n], "start": "lazy", **entry}
        for n in names
    }
    return parse_config({"mcpServers": servers})


def starts(folder: Path, name: str | None = None) -> list[Path]:
    """The marker files of the servers that started (of `name` only, when given)."""
    return [
        p
        for p in folder.iterdir()
        if p.name.rsplit("-", 1)[-1].isdigit() and name in (None, p.name.rsplit("-", 1)[0])
    ]


def calls(*batches: list[str]) -> ScriptedModel:
    """A model that calls each batch of tools in one round (at once), then says done."""

    def step(names: list[str]) -> Any:
        def call(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
            return AssistantMessage("", [ToolCall(f"c{i}", n, {}) for i, n in enumerate(names)])

        return call

    def done(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return AssistantMessage("done")

    return ScriptedModel([*(step(b) for b in batches), done])


def results(history: list[Message]) -> list[tuple[str, bool]]:
    out = []
    for message in history:
        if isinstance(message, ToolResults):
            for r in message.results:
                out.append((" ".join(b.get("text", "") for b in r.content), r.is_error))
    return out


def saved(store: RecordStore, cfg: HostConfig, now: float, ttl_ms: int = 60_000) -> None:
    for server in cfg.servers.values():
        store.save(server, Record(now, ttl_ms, "public", lists={"tools": [PING]}))


async def ready(host: Host) -> None:
    """Wait for server `a` (started with the host) past the host's start-up deadline."""
    async with asyncio.timeout(scaled(60)):
        await host.fleet.links["a"].until(LinkState.READY)


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


async def test_thirty_lazy_servers_open_without_starting_any_and_one_call_starts_one(
    tmp_path: Path,
) -> None:
    names = [f"s{i}" for i in range(30)]
    cfg = config(tmp_path, names)
    store = RecordStore(tmp_path / "records")
    saved(store, cfg, time.time())
    # Two calls of s3's tool in one round share one start; s7's call starts s7.
    model = calls(["s3__ping", "s3__ping", "s7__ping"])
    began = time.monotonic()
    async with Host(cfg, model=model, ui=RecordingUI(), records=store) as host:
        opened = time.monotonic() - began
        assert starts(tmp_path) == []  # no process
        assert opened < scaled(1.0)
        assert all(link.state is LinkState.IDLE for link in host.fleet.links.values())
        assert len(host.fleet.catalog()) == 30
        agent = host.agent()
        await agent.ask("ping")
        assert results(agent.history) == [("pong", False)] * 3
        assert len(starts(tmp_path, "s3")) == 1
        assert len(starts(tmp_path, "s7")) == 1
        assert len(starts(tmp_path)) == 2
        assert host.fleet.links["s3"].up and host.fleet.links["s0"].idle


async def test_idle_timeout_stops_a_lazy_server_and_its_next_call_starts_it_again(
    tmp_path: Path,
) -> None:
    cfg = config(tmp_path, ["a"], idleTimeout=0.2)
    store = RecordStore(tmp_path / "records")
    saved(store, cfg, time.time())
    twice = ScriptedModel(calls(["a__ping"]).steps * 2)  # one call per question
    async with Host(cfg, model=twice, ui=RecordingUI(), records=store) as host:
        link = host.fleet.links["a"]
        agent = host.agent()
        await agent.ask("ping")
        assert len(starts(tmp_path)) == 1
        async with asyncio.timeout(scaled(15)):
            await link.until(LinkState.IDLE)
        assert link.client is None and "idleTimeout" in (link.detail or "")
        assert [s.name for s in host.fleet.catalog()] == ["a__ping"]  # still offered
        await agent.ask("again")
        assert results(agent.history)[-1] == ("pong", False)
        assert len(starts(tmp_path)) == 2


async def test_a_server_without_a_record_starts_once_and_the_next_host_uses_its_record(
    tmp_path: Path,
) -> None:
    cfg = config(tmp_path, ["a"])
    store = RecordStore(tmp_path / "records")
    ui = RecordingUI()
    async with Host(cfg, model=calls(), ui=ui, records=store) as host:
        await ready(host)
    assert any("no record of its tools yet" in text for text in ui.of("info"))
    assert len(starts(tmp_path)) == 1
    record = store.load(cfg.servers["a"])
    assert record is not None and record.scope == "public" and record.ttl_ms == 60_000
    assert [t["name"] for t in record.tools] == ["ping"]
    assert record.instructions == "a: ping answers pong."
    assert [r["uri"] for r in record.resources] == ["lazy://note"]

    cfg = config(tmp_path, ["a"], trusted=True)
    async with Host(cfg, model=calls(), ui=RecordingUI(), records=store) as host:
        link = host.fleet.links["a"]
        assert link.idle and len(starts(tmp_path)) == 1
        assert [s.name for s in host.fleet.catalog()] == ["a__ping"]
        assert "a: ping answers pong." in (with_instructions(None, host.fleet) or "")


async def test_a_record_within_its_ttl_is_used_and_one_past_it_is_marked_stale_and_refreshed(
    tmp_path: Path,
) -> None:
    clock = Clock()
    cfg = config(tmp_path, ["a"])
    store = RecordStore(tmp_path / "records", clock=clock)
    saved(store, cfg, clock.now, ttl_ms=60_000)

    clock.now += 30  # within ttlMs
    ui = RecordingUI()
    async with Host(cfg, model=calls(), ui=ui, records=store) as host:
        link = host.fleet.links["a"]
        assert isinstance(link, LazyLink) and link.idle and not link.record_stale
        assert "stale" not in (link.detail or "")
    assert not any("stale" in text for text in ui.of("info"))

    clock.now += 60  # past it
    (tmp_path / "description").write_text("Echo the text, loudly.", encoding="utf-8")
    ui = RecordingUI()
    async with Host(cfg, model=calls(["a__ping"]), ui=ui, records=store) as host:
        link = host.fleet.links["a"]
        assert isinstance(link, LazyLink) and link.record_stale
        assert "stale" in (link.detail or "")
        assert any("stale" in text for text in ui.of("info"))
        assert starts(tmp_path) == []
        await host.agent().ask("ping")  # starts it: the record is listed afresh
        assert not link.record_stale
    record = store.load(cfg.servers["a"])
    assert record is not None and record.saved == clock.now
    assert record.tools[0]["description"] == "Echo the text, loudly."


async def test_pins_withhold_a_definition_found_changed_when_a_lazy_server_starts(
    tmp_path: Path,
) -> None:
    cfg = config(tmp_path, ["a"])
    store = RecordStore(tmp_path / "records")
    saved(store, cfg, time.time())
    pins = ToolPins(tmp_path / "pins.json")
    pins.pin("a", [PING])  # approved as recorded (else the quarantine holds it as new)
    (tmp_path / "description").write_text("Now it also deletes things.", encoding="utf-8")
    ui = RecordingUI()
    async with Host(cfg, model=calls(["a__ping"]), ui=ui, pins=pins, records=store) as host:
        assert host.fleet.links["a"].idle  # pinned from its record: "Echo the text."
        agent = host.agent()
        await agent.ask("ping")
        ((text, error),) = results(agent.history)
        assert error and "withheld until approved" in text
        assert any("changed the definition of tool 'ping'" in w for w in ui.of("warn"))
        assert [c.tool for c in host.fleet.pending_changes()] == ["ping"]


async def test_a_lazy_server_that_fails_to_start_answers_its_call_in_one_line(
    tmp_path: Path,
) -> None:
    cfg = parse_config(
        {
            "mcpServers": {
                "a": {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]}
                | {"start": "lazy"}
            }
        }
    )
    store = RecordStore(tmp_path / "records")
    saved(store, cfg, time.time())
    async with Host(cfg, model=calls(["a__ping"]), ui=RecordingUI(), records=store) as host:
        agent = host.agent()
        await agent.ask("ping")
        ((text, error),) = results(agent.history)
        assert error and "\n" not in text
        assert text.startswith("The 'a' server failed to start on first use")


async def test_no_cache_keeps_no_record_and_starts_the_server_to_list_it(tmp_path: Path) -> None:
    cfg = config(tmp_path, ["a"])
    settings = HostSettings(cache=False, records=tmp_path / "records")
    async with Host(cfg, model=calls(), ui=RecordingUI(), settings=settings) as host:
        await ready(host)
    assert len(starts(tmp_path)) == 1
    assert not (tmp_path / "records").exists()


def test_start_and_idle_timeout_are_checked_in_the_config() -> None:
    entry = {"command": "x", "start": "lazy", "idleTimeout": 30}
    server = parse_config({"mcpServers": {"a": entry}}).servers["a"]
    assert (server.start, server.idle_timeout) == ("lazy", 30.0)
    assert parse_config({"mcpServers": {"a": {"command": "x"}}}).servers["a"].start == "eager"
    with pytest.raises(ValueError, match='"start" is "eager"'):
        parse_config({"mcpServers": {"a": {"command": "x", "start": "later"}}})
    with pytest.raises(ValueError, match="idleTimeout"):
        parse_config({"mcpServers": {"a": {"command": "x", "idleTimeout": -1}}})


def test_the_cache_and_records_keys_of_host_and_no_cache_on_the_command_line(
    tmp_path: Path,
) -> None:
    from mcpkit.cli.host import _prepare

    config = tmp_path / "mcp.json"
    document = {"mcpServers": {"a": {"command": "x"}}, "host": {"records": "kept"}}
    config.write_text(json.dumps(document), encoding="utf-8")
    settings = HostSettings.from_config(load_config(config))
    assert settings.cache and settings.records == tmp_path / "kept"
    assert not _prepare(config, None, None, None, no_cache=True)[3].cache
    document["host"] = {"cache": False}
    config.write_text(json.dumps(document), encoding="utf-8")
    assert not HostSettings.from_config(load_config(config)).cache
    document["host"] = {"cache": "no"}
    config.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ValueError, match='"cache" must be true or false'):
        HostSettings.from_config(load_config(config))


async def test_reconnecting_an_idle_server_starts_it(tmp_path: Path) -> None:
    cfg = config(tmp_path, ["a"])
    store = RecordStore(tmp_path / "records")
    saved(store, cfg, time.time())
    async with Host(cfg, model=calls(), ui=RecordingUI(), records=store) as host:
        assert host.fleet.links["a"].idle
        async with asyncio.timeout(scaled(60)):
            await host.fleet.reconnect("a")
        assert host.fleet.links["a"].up and len(starts(tmp_path)) == 1
