"""`Server.mount(other, prefix)`: tools and prompts as `prefix__name`, resources and templates
as `prefix+scheme:...`, completions routed, changes followed; both eras, MRTR and tasks."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from gateway_support import Answers, accept, serving
from mcpkit import Context, Server
from mcpkit.client import Client
from mcpkit.server.prefixes import prefix_uri, split_uri, uri_prefix
from support import ROOT, scaled

sys.path.insert(0, str(ROOT / "tests/servers"))
from proxy_backend import build


def parent_with_billing() -> tuple[Server, Server]:
    @asynccontextmanager
    async def child_life(server: Server) -> AsyncIterator[str]:
        yield "billing-db"

    parent = Server("shop")

    @parent.tool()
    async def home() -> str:
        """The parent's own tool."""
        return "home"

    @parent.completion()
    def own(ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]) -> list[str]:
        return ["own"]

    child = build("billing")
    child.lifespan = child_life

    @child.tool()
    async def which_db(ctx: Context) -> str:
        """Say which lifespan state the handler sees."""
        return str(ctx.lifespan)

    parent.mount(child, prefix="billing")
    return parent, child


def test_prefixed_uris_round_trip() -> None:
    assert uri_prefix("Billing_EU") == "billing-eu"
    assert prefix_uri("billing", "file:///r.txt") == "billing+file:///r.txt"
    assert split_uri("billing+file:///r.txt") == ("billing", "file:///r.txt")
    assert split_uri("a+b+git+ssh://x") == ("a", "b+git+ssh://x")
    assert split_uri("https://example.com/a+b") is None
    assert split_uri("file:///no-prefix") is None
    # MCP Apps hosts show ui:// resources only: the prefix goes inside.
    assert prefix_uri("billing", "ui://shop/card") == "ui://billing+shop/card"
    assert split_uri("ui://billing+shop/card") == ("billing", "ui://shop/card")
    assert split_uri("ui://shop/card") is None


async def test_mounted_server_in_process() -> None:
    parent, _child = parent_with_billing()
    await parent.startup()
    try:
        answers = Answers(accept(name="Ann"), accept(city="Rome"))
        async with Client(parent, elicitation=answers) as client:
            names = {t.name for t in await client.list_tools()}
            assert {"home", "billing__echo", "billing__greet", "billing__which_db"} <= names
            assert "echo" not in names
            assert (await client.call_tool("billing__echo", {"text": "x"})).text == "x"
            assert (await client.call_tool("billing__greet", {})).text == "Hello Ann from Rome!"
            assert (await client.call_tool("billing__which_db", {})).text == "billing-db"
            resources = [r.uri for r in await client.list_resources()]
            assert resources == ["billing+notes://a"]
            assert (await client.read_resource("billing+notes://a")).text == "note a"
            read = await client.read_resource("billing+notes://items/9")
            assert read.text == "item 9" and read.contents[0]["uri"] == "billing+notes://items/9"
            templates = [t.uri_template for t in await client.list_resource_templates()]
            assert templates == ["billing+notes://items/{item}"]
            prompt = await client.get_prompt("billing__review", {"code": "y"})
            assert prompt.messages[0]["content"]["text"] == "Please review: y"
            mounted = await client.complete(
                {"type": "ref/prompt", "name": "billing__review"}, "code", "ru"
            )
            assert mounted.values == ["rust"]
            template_ref = {"type": "ref/resource", "uri": "billing+notes://items/{item}"}
            assert (await client.complete(template_ref, "item", "p")).values == [
                "python",
                "pytest",
            ]
            result = await client.call_tool("billing__job", {})  # a task at the parent
            assert result.text == "job done (task True, go False)"
    finally:
        await parent.shutdown()


async def test_mounted_server_on_the_legacy_wire() -> None:
    parent, _ = parent_with_billing()
    answers = Answers(accept(name="Bo"), accept(city="Oslo"))
    async with serving(parent) as url, Client(url, era="legacy", elicitation=answers) as client:
        assert client.era == "legacy"
        assert "billing__greet" in {t.name for t in await client.list_tools()}
        assert (await client.call_tool("billing__greet", {})).text == "Hello Bo from Oslo!"
        assert (await client.read_resource("billing+notes://a")).text == "note a"
        assert (await client.call_tool("billing__which_db", {})).text == "billing-db"


async def test_changes_of_the_mounted_server_reach_the_parent_listeners() -> None:
    parent, child = parent_with_billing()
    async with (
        serving(parent) as url,
        Client(url) as client,
        client.subscribe(tools=True, resource_uris=["billing+notes://a"]) as sub,
    ):
        await client.call_tool("billing__grow", {})
        note = await asyncio.wait_for(anext(aiter(sub)), scaled(10))
        assert note.method == "notifications/tools/list_changed"
        assert "billing__extra" in {t.name for t in await client.list_tools()}
        await client.call_tool("billing__touch", {})
        note = await asyncio.wait_for(anext(aiter(sub)), scaled(10))
        assert note.method == "notifications/resources/updated"
        assert note.params is not None and note.params["uri"] == "billing+notes://a"
    child.remove_tool("extra")
    assert "billing__extra" not in parent.tools


def test_clashes_are_refused() -> None:
    parent = Server("p")

    @parent.tool(name="billing__echo")
    def taken() -> str:
        return ""

    with pytest.raises(ValueError, match="already registered"):
        parent.mount(build("billing"), prefix="billing")
    other = Server("q")
    other.mount(build("a"), prefix="billing")
    with pytest.raises(ValueError, match="already mounted"):
        other.mount(build("b"), prefix="Billing")
    with pytest.raises(ValueError, match="invalid prefix"):
        other.mount(build("c"), prefix="9lives")
    with pytest.raises(ValueError, match="itself"):
        other.mount(other, prefix="self")


async def test_nested_mounts_nest_their_prefixes() -> None:
    inner = build("inner")
    middle = Server("middle")
    middle.mount(inner, prefix="b")
    outer = Server("outer")
    outer.mount(middle, prefix="a")
    async with Client(outer) as client:
        assert (await client.call_tool("a__b__echo", {"text": "deep"})).text == "deep"
        assert (await client.read_resource("a+b+notes://a")).text == "note a"
