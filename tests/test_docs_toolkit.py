"""The blocks of docs/server-toolkit.md ("Building a good tool server") run, and do what the
page says."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest

from mcpkit.server.auth.access import AccessToken, current_access
from support import ROOT, ask, text_of

PAGE = (ROOT / "docs/server-toolkit.md").read_text()


def block(name: str) -> dict[str, Any]:
    """Run the python block after `<!-- toolkit:NAME -->`; its namespace."""
    found = re.search(rf"<!-- toolkit:{name} -->\n```python\n(.*?)```", PAGE, re.DOTALL)
    assert found is not None, f"docs/server-toolkit.md block toolkit:{name} is missing"
    namespace: dict[str, Any] = {"__name__": f"toolkit_{name}"}
    exec(compile(found.group(1), f"docs/server-toolkit.md:toolkit:{name}", "exec"), namespace)
    return namespace


async def call(server: Any, tool: str, who: str | None = None, **arguments: Any) -> Any:
    reset = current_access.set(AccessToken(subject=who) if who is not None else None)
    try:
        return await ask(server, "tools/call", {"name": tool, "arguments": arguments})
    finally:
        current_access.reset(reset)


async def test_handles() -> None:
    server = block("handles")["server"]
    basket = text_of(await call(server, "open_basket", "ann"))
    added = await call(server, "add_item", "ann", basket_id=basket, sku="KET-BLUE")
    assert not added.get("isError") and text_of(added) == "KET-BLUE"
    foreign = await call(server, "add_item", "bob", basket_id=basket, sku="X")
    assert foreign["isError"] is True and "call open_basket again" in text_of(foreign)


async def test_errors(caplog: pytest.LogCaptureFixture) -> None:
    server = block("errors")["server"]
    refused = await call(server, "order_status", order_id="X")
    assert text_of(refused) == "No order 'X'; order ids look like ORD-7."
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        masked = text_of(await call(server, "order_status", order_id="ORD-1"))
    assert "hunter2" not in masked
    assert masked.startswith("Tool 'order_status' failed with an internal error (reference ")
    ref = masked.split("(reference ")[1][:8]
    assert f"tool 'order_status' failed (reference {ref})" in caplog.text


async def test_docstrings() -> None:
    server = block("docstrings")["server"]
    definition = server.tools["forecast"].definition
    assert definition["description"] == (
        "Forecast the weather for a city.\n\nUse it for weather to come, not for today's.\n\n"
        "Returns: One line per day with the high and low."
    )


async def test_timeout() -> None:
    server = block("timeout")["server"]
    assert server.tools["crawl"].timeout == 2
    server.tools["crawl"].timeout = 0.05  # the same path, without waiting 2 s
    result = await call(server, "crawl", url="https://example.com")
    assert result["isError"] is True and "did not finish within 0.05 s" in text_of(result)


async def test_middleware_and_lifespan(caplog: pytest.LogCaptureFixture) -> None:
    namespace = block("middleware")
    server = namespace["server"]
    await server.startup()
    try:
        with caplog.at_level(logging.INFO):
            result = await call(server, "db_status", "ann")
        assert text_of(result) == "connected"
        assert "ann called db_status" in caplog.text
        assert "tools/call db_status ok" in caplog.text  # TimingLog
    finally:
        await server.shutdown()
    assert server.lifespan_state is None


def test_settings() -> None:
    block("settings")  # its own assertions
