"""The commands a FastMCP user reaches for first: `read`, `prompt`, `.py` targets, arguments
coerced by the tool's schema, did-you-mean, the URL hint, empty lists, and errors that are one
whole line (issue 14)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner, Result

from mcpkit.cli.arguments import coerce_arguments, resolve_target, split_command_tail
from mcpkit.cli.errors import one_line
from mcpkit.cli.main import app
from support import ROOT

SERVER = str(ROOT / "tests/servers/cli_server.py")


def invoke(*argv: str) -> Result:
    head, tail = split_command_tail(argv)
    return CliRunner().invoke(app, head, obj=tail, prog_name="mcpkit")


def one_error(result: Result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


# -- targets and arguments (no I/O) ------------------------------------------------------


def test_a_py_file_is_served_with_this_interpreter() -> None:
    assert resolve_target("srv.py", None) == [
        sys.executable, "-m", "mcpkit", "run", "srv.py", "--quiet"
    ]  # fmt: skip
    assert resolve_target("srv.py:app", None)[-2] == "srv.py:app"  # type: ignore[index]
    assert resolve_target(None, ["srv.py"])[0] == sys.executable
    assert resolve_target("python srv.py", None) == "python srv.py"  # a command stays one
    assert resolve_target("https://x.example/mcp", None) == "https://x.example/mcp"


@pytest.mark.parametrize(
    "text", ["127.0.0.1:8000/mcp", "localhost:8000", "mcp.example.com:443/mcp", "[::1]:8000/mcp"]
)
def test_a_url_without_scheme_gets_the_fix(text: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"use http://{text}")):
        resolve_target(text, None)


def test_values_take_the_type_the_schema_wants() -> None:
    schema = {
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean"},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "tags": {"type": "array"},
            "mode": {"enum": ["1", "2"]},
        }
    }
    raw = {
        "city": "123", "days": "3", "ratio": "2", "flag": "True", "maybe": "null",
        "tags": '["a"]', "mode": "1", "free": "7", "text": "x y",
    }  # fmt: skip
    assert coerce_arguments(raw, schema) == {
        "city": "123", "days": 3, "ratio": 2, "flag": True, "maybe": None,
        "tags": ["a"], "mode": "1", "free": 7, "text": "x y",
    }  # fmt: skip
    assert coerce_arguments({"days": "x"}, schema) == {"days": "x"}  # the server says why


def test_one_line_joins_and_never_cuts() -> None:
    message = "1 validation error for call[add]\nb\n  Input should be a valid integer [type=int]"
    assert one_line(message) == (
        "1 validation error for call[add] b Input should be a valid integer [type=int]"
    )


# -- commands against a real server (stdio) ---------------------------------------------


def test_call_coerces_by_schema_over_a_py_target() -> None:
    result = invoke("call", SERVER, "greet", "city=123", "times=2")
    assert result.exit_code == 0, result.output
    assert result.stdout == "hello 123 (str) hello 123 (str)\n"


def test_call_with_args_json() -> None:
    result = invoke("call", SERVER, "greet", "--args", '{"city": "Oslo", "times": 2}', "times=1")
    assert (result.exit_code, result.stdout) == (0, "hello Oslo (str)\n"), result.output
    assert "--args must be a JSON object" in one_error(
        invoke("call", SERVER, "greet", "--args", "[1]")
    )


def test_read_a_resource() -> None:
    result = invoke("read", SERVER, "notes://today")
    assert (result.exit_code, result.stdout) == (0, "buy milk\n"), result.output
    as_json = invoke("read", "--json", SERVER, "notes://today")
    assert orjson.loads(as_json.stdout)["contents"][0]["text"] == "buy milk"
    assert "notes://nope" in one_error(invoke("read", SERVER, "notes://nope"))


def test_get_a_prompt() -> None:
    result = invoke("prompt", SERVER, "review", "topic=the plan")
    assert result.exit_code == 0, result.output
    assert result.stdout == "# Ask for a review.\nuser: Please review the plan.\n"
    as_json = invoke("prompt", "--json", "review", "topic=x", "--", SERVER)
    assert orjson.loads(as_json.stdout)["messages"][0]["role"] == "user"


@pytest.mark.parametrize(
    ("argv", "suggestion"),
    [
        (("call", SERVER, "gret", "city=x"), "did you mean 'greet'?"),
        (("prompt", SERVER, "reveiw"), "did you mean 'review'?"),
        (("lsit", SERVER), "did you mean 'list' or 'lint'?"),
    ],
)
def test_did_you_mean(argv: tuple[str, ...], suggestion: str) -> None:
    assert suggestion in one_error(invoke(*argv))


def test_url_without_scheme_is_one_line() -> None:
    line = one_error(invoke("list", "127.0.0.1:8000/mcp"))
    assert "use http://127.0.0.1:8000/mcp" in line


@pytest.mark.parametrize("kind", ["prompts", "resources", "templates"])
def test_empty_lists_look_alike(kind: str, tmp_path: Path) -> None:
    bare = tmp_path / "bare.py"
    bare.write_text("from mcpkit import Server\nserver = Server('bare')\n")
    result = invoke("list", str(bare), "--kind", kind)
    assert (result.exit_code, result.stdout) == (0, f"no {kind}\n"), result.output
    assert invoke("list", str(bare), "--kind", kind, "--json").stdout == "[]\n"


def test_server_errors_keep_every_line(tmp_path: Path) -> None:
    """A server whose error message spans lines (FastMCP/SDK validation errors do)."""
    path = tmp_path / "multiline.py"
    path.write_text(
        "from mcpkit import Server\nfrom mcpkit.protocol.errors import InvalidParams\n"
        "server = Server('ml')\n@server.tool()\ndef add(a: int) -> int:\n"
        "    raise InvalidParams('1 validation error for call[add]\\na\\n  Input should be a valid integer')\n"
    )
    line = one_error(invoke("call", str(path), "add", "a=1"))
    assert "call[add] a Input should be a valid integer (error -32602)" in line


# -- `mcpkit run` (in process: the server's run() is replaced by a recorder) --------------

RECORDER = """
from mcpkit import Server
server = Server("rec", version="2.0")
@server.tool()
def one() -> str:
    return "1"
server.run = lambda transport, **kw: print("ran", transport, sorted(kw.items()))
"""


def test_run_says_what_it_serves(tmp_path: Path) -> None:
    path = tmp_path / "rec.py"
    path.write_text(RECORDER)
    http = invoke("run", str(path), "-T", "http", "--port", "8123", "--log-level", "info")
    assert http.exit_code == 0, http.output
    assert (
        http.stderr
        == "mcpkit: serving rec 2.0 (1 tool) at http://127.0.0.1:8123/mcp (Ctrl-C to stop)\n"
    )
    assert "('log_level', 'info')" in http.stdout and "('port', 8123)" in http.stdout
    stdio = invoke("run", str(path))
    assert stdio.stderr == "mcpkit: serving rec 2.0 (1 tool) over stdio\n"
    assert invoke("run", str(path), "--quiet").stderr == ""


@pytest.mark.parametrize("port", ["99999", "0", "-1", "http"])
def test_run_refuses_a_bad_port(port: str, tmp_path: Path) -> None:
    path = tmp_path / "rec.py"
    path.write_text(RECORDER)
    line = one_error(invoke("run", str(path), "-T", "http", "--port", port))
    assert "--port" in line and "mcpkit run --help" in line


def test_run_refuses_a_port_in_use(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "rec.py"
    path.write_text(RECORDER)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        line = one_error(invoke("run", str(path), "-T", "http", "--port", str(port)))
    assert f"cannot listen on 127.0.0.1:{port}" in line and "another --port" in line


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("from mcpkit import Server\nserver = Server('x'\n", "syntax error"),
        ("import os\nvalue = missing_name\n", "NameError: name 'missing_name' is not defined"),
        ("import no_such_module_here\n", "cannot import"),
        ("x = 1\n", "no mcpkit Server found"),
    ],
)
def test_run_a_broken_file_is_one_line(source: str, words: str, tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text(source)
    assert words in one_error(invoke("run", str(path)))


def test_the_cli_reference_is_generated_from_the_commands() -> None:
    from mcpkit.cli.reference import markdown

    page = markdown()
    for command in (
        "run",
        "discover",
        "list",
        "call",
        "read",
        "prompt",
        "install",
        "host",
        "tools",
    ):
        assert f"## mcpkit {command}\n" in page
    assert "| `--port` | integer | HTTP port, 1-65535 [MCPKIT_PORT, else 8000]. |  |" in page
    assert "`claude-desktop` \\| `claude-code` \\| `cursor` \\| `vscode` \\| `mcp-json`" in page


def test_the_spinner_shows_elapsed_time_on_a_terminal_only() -> None:
    import io

    from rich.console import Console

    from mcpkit.cli.spinner import waiting

    terminal = Console(file=io.StringIO(), force_terminal=True, width=80)
    with waiting("calling forecast", console=terminal):
        pass
    drawn = terminal.file.getvalue()  # type: ignore[attr-defined]
    assert "calling forecast… 0.0 s" in drawn  # drawn (at least on stop), then erased
    pipe = Console(file=io.StringIO(), force_terminal=False)
    with waiting("calling forecast", console=pipe):
        pass
    assert pipe.file.getvalue() == ""  # type: ignore[attr-defined]
