"""End to end over stdio: `mcpkit call ... -- python -m mcpkit.cli run server.py`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcpkit.cli.arguments import split_command_tail
from mcpkit.cli.main import app

TINY_SERVER = '''
from mcpkit.server import Server

server = Server("tiny", version="1.2.3", instructions="Adds numbers.")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''


@pytest.fixture
def server_argv(tmp_path: Path) -> list[str]:
    pytest.importorskip("mcpkit.server")
    path = tmp_path / "tiny_server.py"
    path.write_text(TINY_SERVER)
    return [sys.executable, "-m", "mcpkit.cli", "run", str(path)]


def invoke(*argv: str) -> tuple[int, str, str]:
    head, tail = split_command_tail(argv)
    result = CliRunner().invoke(app, head, obj=tail, prog_name="mcpkit")
    return result.exit_code, result.stdout, result.stderr


def test_discover_list_and_call_a_real_server(server_argv: list[str]) -> None:
    code, out, err = invoke("discover", "--", *server_argv)
    assert code == 0, err
    assert "tiny 1.2.3" in out and "2026-07-28" in out and "tools" in out

    code, out, err = invoke("list", "--", *server_argv)
    assert code == 0, err
    assert "add" in out and "a*, b*" in out and "Add two integers." in out

    code, out, err = invoke("call", "add", "a=2", "b=40", "--", *server_argv)
    assert (code, out) == (0, "42\n"), err

    code, out, err = invoke("call", "add", "a=2", "b=oops", "--", *server_argv)
    assert code == 1 and out == ""
    assert err.startswith("error: ") and "b" in err

    code, out, err = invoke("call", "missing", "--", *server_argv)
    assert code == 1
    assert "(error -32602)" in err and "Traceback" not in err
