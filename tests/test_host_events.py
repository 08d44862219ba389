"""Server state changes are typed events published once on the fleet's bus (`host.events`):
the UI hears them through its subscription (`to_ui`), and so does any other listener (a real
stdio server process that dies mid-call and is restarted)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from host_support import RecordingUI
from mcpkit.client import ClientError
from mcpkit.host import ConsentPolicy, LinkState, parse_config
from mcpkit.host.backoff import Backoff
from mcpkit.host.connections import Fleet
from mcpkit.host.events import Event
from mcpkit.host.supervision import StateChange
from support import ROOT, scaled

SERVER = str(ROOT / "tests/servers/gateway_options_server.py")


@pytest.mark.timing
async def test_state_changes_are_published_once_for_every_listener(tmp_path: Path) -> None:
    entry = {"command": sys.executable, "args": [SERVER, str(tmp_path / "marker")]}
    cfg = parse_config({"mcpServers": {"opt": entry}}, env={})
    ui = RecordingUI()
    fleet = Fleet(cfg, ui, ConsentPolicy(), restart=Backoff(initial=0.05))
    heard: list[Event] = []
    back = asyncio.Event()

    def listen(event: Event) -> None:
        heard.append(event)
        if isinstance(event, StateChange) and event.state is LinkState.READY:
            back.set()

    stop = fleet.events.subscribe(listen)
    await fleet.start()
    try:
        link = fleet.links["opt"]
        assert link.client is not None
        with pytest.raises(ClientError):
            await link.client.call_tool("flaky", {})  # its process exits mid-call
        await asyncio.wait_for(back.wait(), scaled(10))  # restarted
    finally:
        stop()
        await fleet.close()
    states = [(e.server, e.state.value) for e in heard if isinstance(e, StateChange)]
    assert states[0] == ("opt", "down") and states[-1] == ("opt", "ready")
    assert ui.of("state") == states  # the UI heard each change once, as every listener did
