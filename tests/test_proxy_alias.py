"""`Server.proxy` is a deprecated alias of `mcpkit.gateway.proxy`: the gateway registers it when
it loads, and the server package never imports the gateway (no package cycle, `.importlinter`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mcpkit import Server
from mcpkit.client import Client
from mcpkit.gateway import proxy
from mcpkit.gateway.front import Front
from support import scaled


async def test_server_proxy_warns_and_forwards_like_the_gateways_proxy() -> None:
    shop = Server("shop")

    @shop.tool()
    def price(item: str) -> float:
        """The price of an item."""
        return 4.5

    with pytest.warns(DeprecationWarning, match="from mcpkit.gateway import proxy"):
        front = Server.proxy(shop, name="shop-front")
    assert isinstance(front, Front) and Server.proxy_factory is proxy
    await front.startup()
    try:
        async with Client(front) as client:
            assert [t.name for t in await client.list_tools()] == ["price"]
            assert (await client.call_tool("price", {"item": "tea"})).text == "4.5"
    finally:
        await front.shutdown()


SCRIPT = """
import sys, warnings
warnings.simplefilter("ignore", DeprecationWarning)
from mcpkit import Server
server = Server("s")
server.http_app()  # the serving parts load too
try:
    Server.proxy("http://127.0.0.1:9/mcp")
except RuntimeError as exc:
    print(exc)
print(sorted(m for m in sys.modules if m.startswith("mcpkit.gateway")))
"""


def test_server_proxy_without_the_gateway_says_what_to_do_in_one_line() -> None:
    """A fresh process that never imports the gateway: `Server.proxy` cannot reach it (the
    server does not import upward) and says so in one line, with the spelling to use."""
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=True,
    )
    message, loaded = done.stdout.splitlines()
    assert "the gateway is not loaded" in message
    assert "`from mcpkit.gateway import proxy`" in message
    assert loaded == "[]"
