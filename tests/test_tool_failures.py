"""What a failing tool tells the model: masked exceptions with a reference id, ToolError and
argument errors unchanged, and per-tool timeouts that cancel the handler."""

from __future__ import annotations

import asyncio
import logging
import re
import threading

import pytest

from mcpkit import Server, ToolError
from mcpkit.server.settings import Settings, SettingsError
from support import ask, text_of

SECRET = "db password=hunter2 at 10.0.0.5"


def failing_server(**options: object) -> Server:
    server = Server("db", **options)  # type: ignore[arg-type]

    @server.tool()
    async def lookup(order_id: str) -> str:
        """Look an order up."""
        raise RuntimeError(SECRET)

    @server.tool()
    async def polite(order_id: str) -> str:
        """Refuse politely."""
        raise ToolError(f"No order {order_id!r}; order ids look like ORD-7.")

    return server


async def test_an_unexpected_exception_is_masked_and_logged_with_a_reference(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = failing_server()
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        result = await ask(server, "tools/call", {"name": "lookup", "arguments": {"order_id": "1"}})
    text = text_of(result)
    assert result["isError"] is True
    assert "hunter2" not in str(result) and "10.0.0.5" not in str(result)
    ref = re.search(r"reference ([0-9a-f]{8})", text)
    assert ref is not None, text
    # One record per failure, carrying the reference and the whole traceback (the kind of
    # record the fuzz oracle allows: a tool's own failure logged with a reference id).
    (record,) = [r for r in caplog.records if r.name == "mcpkit.server"]
    assert record.levelno == logging.ERROR
    assert ref.group(1) in record.getMessage() and "'lookup'" in record.getMessage()
    assert record.exc_info is not None and SECRET in caplog.text


async def test_each_failure_has_its_own_reference() -> None:
    server = failing_server()
    args = {"name": "lookup", "arguments": {"order_id": "1"}}
    first, second = [text_of(await ask(server, "tools/call", args)) for _ in range(2)]
    assert first != second


async def test_tool_errors_and_argument_errors_pass_through() -> None:
    server = failing_server()
    polite = await ask(server, "tools/call", {"name": "polite", "arguments": {"order_id": "X"}})
    assert text_of(polite) == "No order 'X'; order ids look like ORD-7."
    bad = await ask(server, "tools/call", {"name": "lookup", "arguments": {"order": 1}})
    assert bad["isError"] is True
    assert "missing required argument 'order_id'" in text_of(bad)
    assert "unexpected argument 'order'" in text_of(bad)


async def test_the_development_switch_shows_the_exception(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = {"name": "lookup", "arguments": {"order_id": "1"}}
    shown = text_of(await ask(failing_server(mask_errors=False), "tools/call", args))
    assert f"RuntimeError: {SECRET}" in shown and "(reference " in shown
    monkeypatch.setenv("MCPKIT_MASK_ERRORS", "0")
    assert SECRET in text_of(await ask(failing_server(), "tools/call", args))
    monkeypatch.setenv("MCPKIT_MASK_ERRORS", "maybe")
    with pytest.raises(SettingsError, match="MCPKIT_MASK_ERRORS='maybe' is not valid"):
        failing_server()
    monkeypatch.delenv("MCPKIT_MASK_ERRORS")
    server = failing_server()
    server.mask_errors = False  # switched later: applies to registered tools too
    assert SECRET in text_of(await ask(server, "tools/call", args))


@pytest.mark.timing
async def test_a_timeout_cancels_the_handler() -> None:
    server = Server("slow")
    started, cancelled = asyncio.Event(), asyncio.Event()

    @server.tool(timeout=0.05)
    async def crawl(url: str) -> str:
        """Fetch every page of a site."""
        started.set()
        try:
            await asyncio.Event().wait()  # never finishes on its own
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "done"

    result = await ask(server, "tools/call", {"name": "crawl", "arguments": {"url": "x"}})
    assert started.is_set() and cancelled.is_set()
    assert result["isError"] is True
    assert text_of(result) == (
        "Tool 'crawl' did not finish within 0.05 s and was stopped. "
        "Try again with a smaller request, or later."
    )


async def test_a_handlers_own_timeout_error_is_an_ordinary_failure() -> None:
    server = Server("t")

    @server.tool(timeout=30)
    async def upstream() -> str:
        """Call a slow upstream."""
        raise TimeoutError("upstream took too long")

    result = await ask(server, "tools/call", {"name": "upstream"})
    assert "internal error (reference" in text_of(result)


@pytest.mark.timing
async def test_a_sync_tool_past_its_timeout_is_answered_and_its_result_dropped() -> None:
    server = Server("t")
    release = threading.Event()

    @server.tool(timeout=0.05)
    def blocking() -> str:
        """Block until released."""
        release.wait(10)
        return "late"

    result = await ask(server, "tools/call", {"name": "blocking"})
    release.set()  # the worker thread cannot be stopped; it ends here, its value discarded
    assert "did not finish within 0.05 s" in text_of(result)


def test_timeouts_are_checked_and_default_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValueError, match="timeout must be a number of seconds above 0"):
        Server("t").tool("zero", timeout=0)(lambda: None)
    monkeypatch.setenv("MCPKIT_TOOL_TIMEOUT", "2.5")
    server = Server("t")

    @server.tool()
    async def a() -> str:
        """A."""
        return ""

    @server.tool(timeout=9)
    async def b() -> str:
        """B."""
        return ""

    assert server.tools["a"].timeout == 2.5 and server.tools["b"].timeout == 9


def test_settings_from_the_environment() -> None:
    env = {
        "MCPKIT_HOST": "0.0.0.0",
        "MCPKIT_PORT": "9100",
        "MCPKIT_LOG_LEVEL": "INFO",
        "MCPKIT_MAX_BODY_BYTES": "1024",
        "MCPKIT_MAX_SESSIONS": "5",
        "MCPKIT_MASK_ERRORS": "off",
        "MCPKIT_TOOL_TIMEOUT": "30",
    }
    s = Settings.from_env(env)
    assert (s.host, s.port, s.log_level, s.max_body_bytes, s.max_sessions) == (
        "0.0.0.0",
        9100,
        "info",
        1024,
        5,
    )
    assert s.mask_errors is False and s.tool_timeout == 30.0
    assert Settings.from_env({}) == Settings()
    assert Settings().pick("port", 1234) == 1234 and Settings().pick("port", None) == 8000
    for name, value, expected in [
        ("MCPKIT_PORT", "70000", "an integer from 0 to 65535"),
        ("MCPKIT_LOG_LEVEL", "loud", "one of debug, info, warning, error, critical"),
        ("MCPKIT_TOOL_TIMEOUT", "-1", "a number of seconds above 0"),
        ("MCPKIT_MAX_BODY_BYTES", "0", "an integer from 1 up"),
        ("MCPKIT_HOST", " ", "a non-empty string"),
    ]:
        with pytest.raises(SettingsError) as info:
            Settings.from_env({name: value})
        assert str(info.value).startswith(f"{name}={value!r} is not valid: expected {expected}")
