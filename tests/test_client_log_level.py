"""Server logs reach a 2026-07-28 client only when it asks (LOG-03/04): `Client(log_level=...)`
sends `io.modelcontextprotocol/logLevel` on every request (or one call), `on_log` gets the
messages at or above it, and `mcpkit call --log-level` prints them on stderr."""

from __future__ import annotations

import importlib.util
import shlex
import sys
from typing import Any

import pytest
from typer.testing import CliRunner

from mcpkit.cli.main import app
from mcpkit.client import Client
from support import ROOT

PATH = ROOT / "tests/servers/cli_server.py"


@pytest.fixture(scope="module")
def server() -> Any:
    spec = importlib.util.spec_from_file_location("cli_server_for_logs", PATH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


async def logs_with(server: Any, **options: Any) -> list[tuple[str, Any]]:
    per_call = options.pop("per_call", None)
    era = options.pop("expect_era", "modern")
    seen: list[tuple[str, Any]] = []
    on_log = lambda level, data, logger: seen.append((level, data))  # noqa: E731
    async with Client(server, on_log=on_log, **options) as client:
        assert client.era == era
        result = await client.call_tool("chatty", log_level=per_call)
    assert result.text == "logged"
    return seen


async def test_debug_gets_all_three_levels(server: Any) -> None:  # LOG-04
    assert await logs_with(server, log_level="debug") == [
        ("debug", "debug detail"),
        ("info", "info note"),
        ("warning", "warning sign"),
    ]


async def test_warning_gets_only_warning(server: Any) -> None:
    assert await logs_with(server, log_level="warning") == [("warning", "warning sign")]


async def test_no_level_no_logs(server: Any) -> None:  # LOG-03
    assert await logs_with(server) == []


async def test_one_call_may_ask_for_its_own_level(server: Any) -> None:
    assert await logs_with(server, per_call="info") == [
        ("info", "info note"),
        ("warning", "warning sign"),
    ]


def test_an_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="log_level must be one of"):
        Client("http://127.0.0.1:1/mcp", log_level="loud")


def test_mcpkit_call_log_level_prints_them_on_stderr() -> None:
    result = CliRunner().invoke(app, ["call", "--log-level", "debug", str(PATH), "chatty"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "logged\n"
    assert result.stderr.splitlines() == [
        "[debug cli] debug detail",
        "[info cli] info note",
        "[warning cli] warning sign",
    ]
    quiet = CliRunner().invoke(app, ["call", str(PATH), "chatty"])
    assert (quiet.stdout, quiet.stderr) == ("logged\n", "")


async def test_a_legacy_session_gets_logging_set_level() -> None:
    stdio = [sys.executable, "-m", "mcpkit", "run", str(PATH), "--quiet"]
    assert await logs_with(stdio, log_level="warning", era="legacy", expect_era="legacy") == [
        ("warning", "warning sign")
    ]


LEGACY = str(ROOT / "tests/servers/legacy_line_server.py")


@pytest.mark.parametrize(
    ("target", "tool", "info_line"),
    [
        (
            shlex.join([sys.executable, LEGACY]),
            "ping",
            "[info legacy] answering pong",
        ),  # 2025-11-25
        (str(PATH), "chatty", "[info cli] info note"),  # 2026-07-28
    ],
)
def test_the_cli_shows_logs_the_same_way_for_both_eras(
    target: str, tool: str, info_line: str
) -> None:
    # issue 26: a 2025-11-25 server's logs showed without --log-level, a 2026-07-28 one's not.
    quiet = CliRunner().invoke(app, ["call", target, tool])
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stderr == ""
    asked = CliRunner().invoke(app, ["call", "--log-level", "info", target, tool])
    assert asked.exit_code == 0, asked.output
    assert info_line in asked.stderr.splitlines() and "debug" not in asked.stderr
