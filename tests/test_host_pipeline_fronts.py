"""Each front end's calls go through the call pipeline: its policies' effects, seen through the
agent loop and through the web UI (a real server process, real pins and audit files).

A consent denial, a refused host-owned argument, a tool withheld since its definition changed,
an audit record and a deadline, each as that front end's user sees it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from host_support import RecordingUI, calls_then_done
from mcpkit.host import Host, parse_config
from mcpkit.host.audit import read_audit
from mcpkit.host.config import HostConfig
from mcpkit.host.consent import ConsentPolicy
from mcpkit.host.conversation import Message, ToolResults
from mcpkit.host.settings import HostSettings
from mcpkit.host.web import WebHost
from mcpkit.host.web.inspector import InspectError
from support import ROOT

SERVER = str(ROOT / "tests/servers/pipeline_server.py")
#: Short on purpose: the `stall` tool never answers, so this deadline always runs out.
STALL_S = 0.3


def config(variant: str = "1") -> HostConfig:
    entry = {
        "command": sys.executable,
        "args": [SERVER, variant],
        "hostOwned": {"customer_id": "C-7"},
        "timeouts": {"stall": STALL_S},
    }
    return parse_config({"mcpServers": {"shop": entry}})


def settings(tmp_path: Path) -> HostSettings:
    return HostSettings(audit=tmp_path / "audit.jsonl", pins=tmp_path / "pins.json")


def texts(history: list[Message]) -> list[str]:
    last = next(m for m in reversed(history) if isinstance(m, ToolResults))
    return [" ".join(str(b.get("text", "")) for b in r.content) for r in last.results]


async def pin_first_definitions(tmp_path: Path) -> None:
    """A first session pins the server's tools as they are (variant 1): the user approves
    the new server's catalogue (`mcpkit pins approve shop`)."""
    async with Host(
        config(), model=calls_then_done(), ui=RecordingUI(), settings=settings(tmp_path)
    ) as h:
        for batch in h.fleet.questions():
            assert all(h.fleet.approve(change) for change in batch)


async def test_agent_runs_every_policy(tmp_path: Path) -> None:
    await pin_first_definitions(tmp_path)
    calls = calls_then_done(("shop__wipe", {}), ("shop__order", {"sku": "B"}), ("shop__stall", {}))
    policy = ConsentPolicy(allow=["shop__*"], deny=["shop__wipe"])
    ui = RecordingUI()
    # Variant 2 changed `order` since it was pinned: it is withheld from the model.
    async with Host(
        config("2"), model=calls, ui=ui, policy=policy, settings=settings(tmp_path)
    ) as host:
        agent = host.agent()
        await agent.ask("go")
        offered = {spec.name for spec in await agent.tools()}
    wipe, withheld, stall = texts(agent.history)
    assert wipe == "The host's consent rules do not allow this tool call."
    assert withheld == "There is no tool named 'shop__order'."
    assert "shop__order" not in offered and "shop__stall" in offered
    assert "no answer within its deadline (0.3 s), and it was cancelled" in stall
    records = {r["call"]: r for r in read_audit(tmp_path / "audit.jsonl")}
    assert (records["c0"]["decision"], records["c0"]["outcome"]) == ("deny", "denied")
    assert records["c2"]["outcome"] == "timeout"


async def test_agent_refuses_a_host_owned_argument_and_fills_it(tmp_path: Path) -> None:
    await pin_first_definitions(tmp_path)
    calls = calls_then_done(
        ("shop__order", {"sku": "A", "customer_id": "C-9"}), ("shop__order", {"sku": "B"})
    )
    ui = RecordingUI()
    policy = ConsentPolicy(allow=["shop__*"])
    async with Host(
        config(), model=calls, ui=ui, policy=policy, settings=settings(tmp_path)
    ) as host:
        agent = host.agent()
        await agent.ask("go")
    refused, filled = texts(agent.history)
    assert refused == "The host refused this call: customer_id can only be set by the host."
    assert filled == "B for C-7"
    assert any("host-owned ['customer_id']" in w for w in ui.of("warn"))
    records = [r for r in read_audit(tmp_path / "audit.jsonl")]
    assert [(r["by"], r["outcome"]) for r in records] == [("host-owned", "denied"), ("host", "ok")]


async def inspect(web: WebHost, tool: str, **arguments: Any) -> str:
    params = {"name": tool, "arguments": arguments}
    try:
        result = await web.inspector.request("shop", "tools/call", params)
    except InspectError as exc:
        return f"refused: {exc}"
    return " ".join(str(b.get("text", "")) for b in result["content"])


def audit_events(web: WebHost, keep: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    return [e["record"] for e in web.hub.events("audit") if keep(e["record"])]


async def test_web_ui_runs_the_pipeline_for_the_inspector_and_the_chat(tmp_path: Path) -> None:
    await pin_first_definitions(tmp_path)
    policy = ConsentPolicy(deny=["shop__wipe"])
    web = WebHost(
        config("2"),
        model=calls_then_done(("shop__wipe", {})),
        settings=settings(tmp_path),
        policy=policy,
    )
    async with web:
        assert web.agent is not None
        await web.agent.ask("wipe it")  # the chat: the rules deny it, the page shows it
        (result,) = web.hub.events("result")
        assert result["is_error"] and "consent rules" in result["content"][0]["text"]
        # The inspector: a host-owned value typed by hand, a withheld tool, a deadline.
        owned = await inspect(web, "stall", customer_id="C-9")
        assert (
            owned == "refused: The host refused this call: customer_id can only be set by the host."
        )
        notes = [n["text"] for n in web.hub.events("note")]
        assert any("the inspector tried to set host-owned" in n for n in notes)
        withheld = await inspect(web, "order", sku="A")
        assert withheld.startswith("refused: The tool 'order'") and "pinned" in withheld
        stall = await inspect(web, "stall")
        assert "got no answer within its deadline (0.3 s)" in stall
        assert await inspect(web, "wipe") == "wiped"  # typed by hand: the user's own call
    inspected = audit_events(web, lambda r: r["agent"] == "inspector")
    assert [(r["tool"], r["decision"], r["by"], r["outcome"]) for r in inspected] == [
        ("stall", "deny", "host-owned", "denied"),
        ("order", "deny", "pins", "denied"),
        ("stall", "allow", "user", "timeout"),
        ("wipe", "allow", "user", "ok"),
    ]
    chat = audit_events(web, lambda r: r["agent"] != "inspector")
    assert [(r["tool"], r["by"], r["outcome"]) for r in chat] == [("wipe", "host", "denied")]
    written = list(read_audit(tmp_path / "audit.jsonl"))
    assert len(written) == 5  # the page's audit trail is the file's
