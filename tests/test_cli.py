"""The `mcpkit` command line (typer), against the scripted stdio server."""

from __future__ import annotations

import shlex
import socket
import sys
from pathlib import Path
from types import ModuleType

import orjson
import pytest
from typer.testing import CliRunner, Result

from mcpkit.cli.arguments import parse_key_values, split_command_tail
from mcpkit.cli.loader import find_server, load_module, split_spec
from mcpkit.cli.main import app, main
from mcpkit.cli.output import content_text, show_notification
from mcpkit.protocol.jsonrpc import Notification

FAKE = str(Path(__file__).with_name("test_client_fake_server.py"))
SERVER_ARGV = [sys.executable, FAKE]
SERVER_LINE = shlex.join(SERVER_ARGV)


def invoke(*argv: str) -> Result:
    """Run the CLI like `main()` does (split at `--`), capturing stdout and stderr apart."""
    head, tail = split_command_tail(argv)
    return CliRunner().invoke(app, head, obj=tail, prog_name="mcpkit")


# -- argument helpers ---------------------------------------------------------------


def test_split_command_tail() -> None:
    assert split_command_tail(["list"]) == (["list"], None)
    assert split_command_tail(["call", "t", "--", "py", "-m", "x", "--", "y"]) == (
        ["call", "t"],
        ["py", "-m", "x", "--", "y"],
    )
    assert split_command_tail(["list", "--"]) == (["list"], [])


def test_parse_key_values() -> None:
    assert parse_key_values(["a=1", "b=x y", 'c={"d": [true]}', 'n="42"', "e=", "f=a=b"]) == {
        "a": 1,
        "b": "x y",
        "c": {"d": [True]},
        "n": "42",
        "e": "",
        "f": "a=b",
    }
    for bad in (["novalue"], ["=1"]):
        with pytest.raises(ValueError):
            parse_key_values(bad)


# -- run: loading a server ------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("server.py", ("server.py", None)),
        ("server.py:mcp", ("server.py", "mcp")),
        ("pkg.mod:obj.attr", ("pkg.mod", "obj.attr")),
        ("C:\\x\\server.py", ("C:\\x\\server.py", None)),
        ("dir:with:colons/s.py", ("dir:with:colons/s.py", None)),
    ],
)
def test_split_spec(spec: str, expected: tuple[str, str | None]) -> None:
    assert split_spec(spec) == expected


class FakeServer:
    def run(self, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000) -> None:
        print(f"ran {transport} {host} {port}")


def test_find_server_by_name() -> None:
    module, inner = ModuleType("m"), ModuleType("ns")
    thing, nested = FakeServer(), FakeServer()
    vars(module).update(thing=thing, ns=inner)
    vars(inner).update(inner=nested)
    assert find_server(module, "thing") is thing
    assert find_server(module, "ns.inner") is nested
    with pytest.raises(LookupError):
        find_server(module, "missing")
    with pytest.raises(LookupError):
        find_server(module, "ns")  # no run()


def test_find_server_without_name_needs_a_server() -> None:
    with pytest.raises(LookupError, match="no mcpkit Server"):
        find_server(ModuleType("empty"))


SERVER_FILE = """
class S:
    def run(self, transport="stdio", host="127.0.0.1", port=8000):
        print("ran", transport, host, port)

custom = S()
"""


def test_run_command_calls_run(tmp_path: Path) -> None:
    path = tmp_path / "my_server.py"
    path.write_text(SERVER_FILE)
    result = invoke("run", f"{path}:custom", "--transport", "http", "--port", "9001")
    assert result.exit_code == 0, result.output
    assert result.stdout == "ran http 127.0.0.1 9001\n"
    assert load_module(str(path)).custom is not None


def test_run_command_errors(tmp_path: Path) -> None:
    missing = invoke("run", str(tmp_path / "nope.py"))
    assert missing.exit_code == 1
    assert "no such file" in missing.stderr
    path = tmp_path / "other.py"
    path.write_text(SERVER_FILE)
    no_obj = invoke("run", f"{path}:absent")
    assert no_obj.exit_code == 1
    assert "no attribute 'absent'" in no_obj.stderr
    bad_transport = invoke("run", str(path), "--transport", "carrier-pigeon")
    assert bad_transport.exit_code == 1
    assert bad_transport.stderr.count("\n") == 1 and "--transport" in bad_transport.stderr


# -- client commands over stdio ------------------------------------------------------


def test_discover() -> None:
    result = invoke("discover", SERVER_LINE)
    assert result.exit_code == 0, result.output
    assert "fake 9.9" in result.stdout
    assert "2026-07-28" in result.stdout
    assert "prompts, tools" in result.stdout
    assert "Be nice." in result.stdout


def test_discover_json_with_command_after_dashes() -> None:
    result = invoke("discover", "--json", "--", *SERVER_ARGV)
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.stdout)["supportedVersions"] == ["2026-07-28"]


def test_list_tools_table() -> None:
    result = invoke("list", SERVER_LINE)
    assert result.exit_code == 0, result.output
    assert "add" in result.stdout and "echo" in result.stdout  # both pages
    assert "a*, b*" in result.stdout
    assert "Add two numbers." in result.stdout and "Second line" not in result.stdout


@pytest.mark.parametrize(
    ("kind", "needle"),
    [("prompts", "who*"), ("resources", "mem://a"), ("templates", "mem://{x}")],
)
def test_list_other_kinds(kind: str, needle: str) -> None:
    result = invoke("list", "--kind", kind, "--", *SERVER_ARGV)
    assert result.exit_code == 0, result.output
    assert needle in result.stdout


def test_list_json() -> None:
    result = invoke("list", "-k", "tools", "--json", SERVER_LINE)
    assert [t["name"] for t in orjson.loads(result.stdout)] == ["add", "echo"]


def test_call_prints_plain_text() -> None:
    result = invoke("call", SERVER_LINE, "add", "a=2", "b=40")
    assert result.exit_code == 0, result.output
    assert result.stdout == "42\n"
    assert "progress 1/2" in result.stderr  # notifications go to stderr


def test_call_with_command_after_dashes_and_json_values() -> None:
    result = invoke("call", "echo", 'x={"y": [1, null]}', "s=hello world", "--", *SERVER_ARGV)
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.stdout) == {"x": {"y": [1, None]}, "s": "hello world"}


def test_call_json_output() -> None:
    result = invoke("call", "--json", SERVER_LINE, "add", "a=1", "b=1")
    assert orjson.loads(result.stdout)["content"] == [{"type": "text", "text": "2"}]


def test_tool_error_exits_1() -> None:
    result = invoke("call", SERVER_LINE, "fail")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "error: it broke" in result.stderr


def test_mcp_error_is_one_red_line() -> None:
    result = invoke("call", SERVER_LINE, "nope")
    assert result.exit_code == 1
    assert result.stderr.strip() == "error: Unknown tool: nope (error -32602)"
    assert "Traceback" not in result.output


def test_dead_server_is_one_line() -> None:
    result = invoke("call", SERVER_LINE, "die")
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert lines and "exited with code 3" in lines[0]
    assert "Traceback" not in result.output


def test_unreachable_http_server_is_one_line() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = invoke("list", f"http://127.0.0.1:{port}/mcp")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ")
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "argv",
    [
        ("list",),
        ("list", "--"),
        ("list", SERVER_LINE, "--", *SERVER_ARGV),
        ("call",),
        ("call", SERVER_LINE),
        ("call", SERVER_LINE, "add", "novalue"),
        ("call", "--", *SERVER_ARGV),
        ("discover", "-H", "NoColon", "http://localhost:1/mcp"),
    ],
)
def test_usage_errors_are_one_line_exit_1(argv: tuple[str, ...]) -> None:
    result = invoke(*argv)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert result.stdout == ""


def test_main_entry_point(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["call", "add", "a=1", "b=2", "--", *SERVER_ARGV])
    assert info.value.code == 0
    assert capsys.readouterr().out == "3\n"
    with pytest.raises(SystemExit) as version:
        main(["--version"])
    assert version.value.code == 0
    assert capsys.readouterr().out.startswith("mcpkit ")


# -- output helpers -------------------------------------------------------------------


def test_content_text_for_every_block_kind() -> None:
    result = {
        "content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "audio", "mimeType": "audio/wav", "data": "AAAAAA=="},
            {"type": "resource_link", "uri": "mem://x", "name": "x"},
            {"type": "resource", "resource": {"uri": "mem://t", "text": "inline"}},
            {"type": "resource", "resource": {"uri": "mem://b", "mimeType": "a/b", "blob": "AA=="}},
            {"type": "future", "x": 1},
        ]
    }
    assert content_text(result).splitlines() == [
        "hello",
        "[image: image/png, 3 bytes]",
        "[audio: audio/wav, 4 bytes]",
        "[resource link: mem://x]",
        "inline",
        "[resource: mem://b, a/b]",
        '{"type":"future","x":1}',
    ]


def test_content_text_falls_back_to_structured_content() -> None:
    assert orjson.loads(content_text({"content": [], "structuredContent": {"a": 1}})) == {"a": 1}
    assert content_text({}) == ""


def test_notifications_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    show_notification(
        Notification(
            "notifications/message", {"level": "warning", "logger": "db", "data": {"x": 1}}
        )
    )
    show_notification(
        Notification("notifications/progress", {"progress": 2, "total": 4, "message": "half [x]"})
    )
    show_notification(Notification("notifications/tools/list_changed", None))
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == ['[warning db] {"x":1}', "progress 2/4 half [x]"]


def test_find_server_prefers_the_usual_names() -> None:
    server_module = pytest.importorskip("mcpkit.server")
    module = ModuleType("m")
    other = server_module.Server("other")
    vars(module).update(app="not a server", other=other)
    assert find_server(module) is other  # the first Server instance
    named = server_module.Server("named")
    vars(module).update(mcp=named)
    assert find_server(module) is named
