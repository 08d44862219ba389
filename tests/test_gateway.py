"""The gateway's pieces in process: names and URIs of every primitive, links inside results,
completions, resource updates, trusted instructions, pins that withhold a changed tool until
approved, per-caller templates and handles, and configuration errors in one line."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway_support import serving
from mcpkit.auth import AccessToken
from mcpkit.client import Client
from mcpkit.gateway import Gateway
from mcpkit.gateway.scoping import HandleScope, TemplateError, render
from mcpkit.host import ConfigError, HostSettings, ToolPins, parse_config
from mcpkit.protocol.errors import MCPError
from support import ROOT, scaled

sys.path.insert(0, str(ROOT / "tests/servers"))
from proxy_backend import build


def config(servers: dict[str, Any], **gateway: Any) -> Any:
    return parse_config({"gateway": gateway, "mcpServers": servers}, env={})


async def test_every_primitive_is_namespaced() -> None:
    async with (
        serving(build("one")) as one,
        serving(build("two")) as two,
    ):
        gateway = Gateway(
            config(
                {
                    "one": {"url": one, "trusted": True, "consent": {"allow": ["*"]}},
                    "Two_B": {"url": two, "consent": {"allow": ["*"]}},
                }
            )
        )
        async with serving(gateway) as front, Client(front) as client:
            tools = {t.name for t in await client.list_tools()}
            assert {"one__echo", "Two_B__echo"} <= tools
            assert (await client.call_tool("Two_B__echo", {"text": "b"})).text == "b"
            uris = sorted(r.uri for r in await client.list_resources())
            assert uris == ["one+notes://a", "two-b+notes://a"]
            assert (await client.read_resource("two-b+notes://items/4")).text == "item 4"
            templates = sorted(t.uri_template for t in await client.list_resource_templates())
            assert templates == ["one+notes://items/{item}", "two-b+notes://items/{item}"]
            prompt = await client.get_prompt("one__review", {"code": "z"})
            assert prompt.messages[0]["content"]["text"] == "Please review: z"
            done = await client.complete({"type": "ref/prompt", "name": "Two_B__review"}, "c", "ru")
            assert done.values == ["rust"]
            ref = {"type": "ref/resource", "uri": "one+notes://items/{item}"}
            assert (await client.complete(ref, "item", "py")).values == ["python", "pytest"]
            linked = await client.call_tool("one__link", {})
            assert linked.content[0]["uri"] == "one+notes://a"  # followable through the gateway
            assert (await client.read_resource(linked.content[0]["uri"])).text == "note a"
            info = await client.discover()
            assert info.instructions == "one: one: say hello."  # trusted servers' only
            async with client.subscribe(resource_uris=["one+notes://a"]) as sub:
                await client.call_tool("one__touch", {})
                note = await asyncio.wait_for(anext(aiter(sub)), scaled(10))
                assert note.params is not None and note.params["uri"] == "one+notes://a"


async def test_a_changed_tool_is_withheld_until_approved(tmp_path: Path) -> None:
    pins = tmp_path / "pins.json"
    ToolPins(pins).pin("app", [{"name": "echo", "description": "Echo the text, politely."}])
    async with serving(build()) as url:
        # Its additions are trusted (offered on sight); a changed definition still waits.
        app = {"url": url, "trusted": True, "trustNewTools": True, "consent": {"allow": ["*"]}}
        gateway = Gateway(config({"app": app}), host=HostSettings(pins=pins))
        async with (
            serving(gateway) as front,
            Client(front) as client,
            client.subscribe(tools=True) as sub,
        ):
            assert "app__echo" not in {t.name for t in await client.list_tools()}
            assert "app__greet" in {t.name for t in await client.list_tools()}
            [change] = ToolPins(pins).pending("app")
            assert "Echo the text back." in change.diff()
            ToolPins(pins).approve("app", "echo")  # as `mcpkit pins approve app echo` does
            note = await asyncio.wait_for(anext(aiter(sub)), scaled(10))
            assert note.method == "notifications/tools/list_changed"
            assert (await client.call_tool("app__echo", {"text": "ok"})).text == "ok"


def test_per_caller_templates() -> None:
    alice = AccessToken("alice", claims={"tenant": "t-1", "sub": "alice"})
    assert render("Bearer tok-{sub}", alice) == "Bearer tok-alice"
    assert render("{claim.tenant}/{{literal}}", alice) == "t-1/{literal}"
    with pytest.raises(TemplateError, match="signed-in"):
        render("{sub}", None)
    with pytest.raises(TemplateError, match="no 'region' claim"):
        render("{claim.region}", alice)
    with pytest.raises(TemplateError, match="unknown field"):
        render("{password}", alice)


def test_handles_are_bound_to_their_caller() -> None:
    now = [0.0]
    scope = HandleScope(ttl=60, clock=lambda: now[0])
    backend = "basket_" + "A" * 24
    result = {"text": f"your basket is {backend}.", "id": backend, "n": 3}
    wrapped = scope.wrap(result, "alice")
    front = wrapped["id"]
    assert front != backend and front.startswith("basket_") and len(front) == len(backend)
    assert wrapped["text"] == f"your basket is {front}." and wrapped["n"] == 3
    assert scope.wrap(backend, "alice") == front  # the same handle, the same front handle
    assert scope.unwrap({"basket_id": front}, "alice") == {"basket_id": backend}
    assert scope.unwrap({"basket_id": front}, "bob") == {"basket_id": front}  # not bob's
    assert scope.wrap(backend, "bob") != front
    assert (
        scope.wrap("plain_text_that_is_not_a_handle", "alice") == "plain_text_that_is_not_a_handle"
    )
    now[0] = 61
    assert scope.unwrap(front, "alice") == front  # expired


@pytest.mark.parametrize(
    ("gateway", "entry", "message"),
    [
        ({"colour": 1}, {}, "unknown keys ['colour']"),
        ({"auth": {"tokens": {"t": {}}}}, {}, "tokens is a list"),
        ({"auth": {}}, {}, 'exactly one of "jwt", "introspection" or "tokens"'),
        ({}, {"userHeaders": {"X": "y"}, "command": "x"}, '"userHeaders" is for HTTP servers'),
        ({}, {"scopes": "all"}, '"scopes" must be a list of strings'),
    ],
)
def test_configuration_errors(gateway: dict[str, Any], entry: dict[str, Any], message: str) -> None:
    server = {"url": "http://127.0.0.1:1/mcp", **entry}
    if "command" in entry:
        del server["url"]
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(")):
        Gateway(config({"s": server}, **gateway))


def test_the_command_says_what_is_wrong_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "gateway.json"
    bad.write_text(json.dumps({"gateway": {"auth": {}}, "mcpServers": {}}))
    for argv, expected in (
        (["--config", str(tmp_path / "missing.json")], "no such file"),
        (["--config", str(bad)], 'needs exactly one of "jwt"'),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "mcpkit", "gateway", *argv],
            capture_output=True,
            text=True,
            timeout=scaled(60),
        )
        assert done.returncode == 1
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0], done.stderr


@pytest.mark.timing
async def test_a_tools_deadline_cancels_it_on_the_backend() -> None:
    backend = build()
    async with serving(backend) as url:
        entry = {
            "url": url,
            "trusted": True,
            "consent": {"allow": ["*"]},
            "timeouts": {"hold": 0.3},
        }
        async with serving(Gateway(config({"app": entry}))) as front, Client(front) as client:
            late = await client.call_tool("app__hold", {})
            assert late.is_error and "within its deadline (0.3 s)" in late.text
            await asyncio.wait_for(backend.cancelled.wait(), scaled(10))  # type: ignore[attr-defined]
            assert (await client.call_tool("app__echo", {"text": "still up"})).text == "still up"
            # With an idempotency key the unknown outcome is an error, not a stored answer:
            # the key stays free for the retry (which the backend, knowing the key, dedups).
            with pytest.raises(MCPError, match="within its deadline"):
                await client.call_tool("app__hold", {}, idempotency_key="k-1")


async def test_new_and_added_tools_wait_for_approval_behind_the_gateway(tmp_path: Path) -> None:
    # Issue #31: a backend seen for the first time offers nothing to front clients until
    # approved (`mcpkit pins approve` with the gateway's config); a tool it adds later is
    # withheld again until approved.
    server = str(ROOT / "tests/servers/drifting_server.py")
    servers = {
        "drifting": {"command": sys.executable, "args": [server], "consent": {"allow": ["*"]}}
    }
    path, pins = tmp_path / "gateway.json", tmp_path / "pins.json"
    path.write_text(json.dumps({"mcpServers": servers}))

    def approve() -> str:
        cli = [sys.executable, "-m", "mcpkit.cli", "pins", "approve", "drifting"]
        done = subprocess.run(
            [*cli, "--config", str(path), "--pins", str(pins)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    gateway = Gateway(config(servers), host=HostSettings(pins=pins))
    async with (
        serving(gateway) as front,
        Client(front) as client,
        client.subscribe(tools=True) as sub,
    ):
        changes = aiter(sub)
        assert [t.name for t in await client.list_tools()] == []
        assert "approved drifting/echo" in await asyncio.to_thread(approve)
        await asyncio.wait_for(anext(changes), scaled(10))
        names = {t.name for t in await client.list_tools()}
        assert names == {"drifting__echo", "drifting__poison"}
        held_line = asyncio.Event()
        loop = asyncio.get_running_loop()

        class Heard(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if "'echo_v2'" in record.getMessage():
                    loop.call_soon_threadsafe(held_line.set)

        logging.getLogger("mcpkit.gateway").addHandler(heard := Heard())
        try:
            await client.call_tool("drifting__poison", {})  # the backend adds echo_v2
            await asyncio.wait_for(held_line.wait(), scaled(10))  # the gateway's warning
        finally:
            logging.getLogger("mcpkit.gateway").removeHandler(heard)
        assert {t.name for t in await client.list_tools()} == names
        [held] = ToolPins(pins).pending("drifting")
        assert held.tool == "echo_v2" and held.new
        assert "approved drifting/echo_v2" in await asyncio.to_thread(approve)
        await asyncio.wait_for(anext(changes), scaled(10))
        assert "drifting__echo_v2" in {t.name for t in await client.list_tools()}
