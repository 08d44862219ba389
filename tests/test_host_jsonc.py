"""Config files as clients write them: JSONC (comments, trailing commas) reads like its plain
twin, in every place a config is read (`load_config`, `mcpkit install`), strings untouched."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.host import ConfigError, load_config
from mcpkit.host.jsonc import JSONCError, is_strict_json, loads

VSCODE_MCP_JSON = """\
// VS Code: Code/User/mcp.json
{
  /* the servers VS Code starts */
  "servers": {
    "weather": {
      "type": "stdio",
      "command": "python3", // the interpreter
      "args": ["weather.py", "http://x/*not a comment*/", "a//b",],
    },
  },
  "inputs": [],
}
"""

# Strings that look like comments or commas, to be kept as written.
_TEXT = st.text(alphabet=st.sampled_from(list('ab/*,"\\\n\t }{é')), max_size=12)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


def _commented(value: Any, notes: st.DataObject) -> str:
    """`value` as JSONC: a comment or nothing between tokens, a trailing comma or not."""

    def gap() -> str:
        return str(notes.draw(st.sampled_from(["", " ", "// c */ \n", "/* // c */", "\n"])))

    def comma() -> str:
        return "," + gap() if notes.draw(st.booleans()) else gap()

    if isinstance(value, list):
        items = [gap() + _commented(v, notes) + gap() for v in value]
        return "[" + ",".join(items) + (comma() if items else gap()) + "]"
    if isinstance(value, dict):
        pairs = [
            gap() + json.dumps(k) + gap() + ":" + gap() + _commented(v, notes)
            for k, v in value.items()
        ]
        return "{" + ",".join(pairs) + (comma() if pairs else gap()) + "}"
    return json.dumps(value)


@settings(max_examples=200, deadline=None)
@given(value=_VALUES, notes=st.data())
def test_jsonc_reads_as_its_plain_twin(value: Any, notes: st.DataObject) -> None:
    assert loads(_commented(value, notes)) == value
    assert loads(json.dumps(value)) == value


def test_a_vscode_file_with_comments_is_read() -> None:
    document = loads(VSCODE_MCP_JSON)
    args = document["servers"]["weather"]["args"]
    assert args == ["weather.py", "http://x/*not a comment*/", "a//b"]
    assert not is_strict_json(VSCODE_MCP_JSON) and is_strict_json(json.dumps(document))


@pytest.mark.parametrize(
    ("text", "line"), [('{\n// x\n"a": 1\n"b": 2}', 4), ("{not json", 1), ("[1,,]", 1)]
)
def test_errors_name_the_line(text: str, line: int) -> None:
    with pytest.raises(JSONCError) as info:
        loads(text)
    assert info.value.line == line and str(info.value).startswith(f"line {line}: ")


@pytest.mark.parametrize(
    "document",
    [
        VSCODE_MCP_JSON,  # VS Code's mcp.json: "servers"
        '{"editor.fontSize": 14, // settings.json\n "mcp": {"servers": {"weather": '
        '{"command": "python3", "args": ["weather.py"]}}},}',
        '{"mcpServers": {"weather": {"command": "python3", "args": ["weather.py"],},},}',
    ],
)
def test_load_config_reads_every_shape(document: str, tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(document)
    config = load_config(path, env={})
    assert config.servers["weather"].command == "python3"
    assert config.servers["weather"].args[0] == "weather.py"


def test_vscode_env_variables_expand(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"servers": {"s": {"command": "${env:PY}", "args": ["${PY:-x}"]}}}')
    server = load_config(path, env={"PY": "python3"}).servers["s"]
    assert server.command == "python3" and server.args == ("python3",)


def test_a_broken_file_is_one_line_with_its_place(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{\n  "mcpServers": {\n    "s": {"command": "x"\n  }\n')
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    assert str(path) in str(info.value) and "line" in str(info.value)
    assert "\n" not in str(info.value)


def test_vscode_predefined_variables_expand(tmp_path: Path) -> None:
    """VS Code's own variables in its `.vscode/mcp.json`: the workspace is the folder that
    holds `.vscode`; the environment still wins for a name it sets."""
    folder = tmp_path / "project" / ".vscode"
    folder.mkdir(parents=True)
    entry = {
        "command": "${workspaceFolder}/bin/server",
        "args": ["${workspaceFolderBasename}", "${userHome}${pathSeparator}x", "${env:HOME}"],
    }
    (folder / "mcp.json").write_text(json.dumps({"servers": {"s": entry}}))
    server = load_config(folder / "mcp.json", env={"HOME": "/h"}).servers["s"]
    assert server.command == f"{tmp_path / 'project'}/bin/server"
    assert server.args == ("project", f"{Path.home()}{os.sep}x", "/h")
