"""`mcpkit install CLIENT SERVER` writes each client's own entry into its own file (a temporary
HOME and working folder here), keeps what the file held, and writes nothing on --dry-run.

The golden files in tests/data/install/ are the whole file after installing the weather
example next to an existing entry; `{PYTHON}` and `{EXAMPLE}` stand for this interpreter and the
example's absolute path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from mcpkit.cli.install import config_path
from mcpkit.cli.main import app
from support import ROOT, free_port, scaled

WEATHER = ROOT / "examples/weather_server.py"
GOLDEN = ROOT / "tests/data/install"
EXISTING = {"mine": {"command": "node", "args": ["mine.js"]}}

#: client → (file under HOME or the project, servers key, a key that must survive)
FILES = {
    "claude-desktop": (".config/Claude/claude_desktop_config.json", "mcpServers"),
    "claude-code": (".claude.json", "mcpServers"),
    "cursor": (".cursor/mcp.json", "mcpServers"),
    "vscode": (".config/Code/User/mcp.json", "servers"),
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("APPDATA", raising=False)
    # `install` pins a package's version (test_host_provenance.py): no registry answers here.
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{free_port()}/simple")
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.chdir(project)
    return home


def install(*argv: str) -> Result:
    return CliRunner().invoke(app, ["install", *argv])


def golden(client: str) -> Any:
    text = (GOLDEN / f"{client}.json").read_text()
    text = text.replace("{PYTHON}", sys.executable).replace("{EXAMPLE}", str(WEATHER))
    return json.loads(text)


def seed(path: Path, key: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"theme": "dark", key: EXISTING}))


@pytest.mark.parametrize("client", sorted(FILES))
def test_install_writes_the_clients_entry(client: str, home: Path) -> None:
    relative, key = FILES[client]
    path = home / relative
    seed(path, key)
    result = install(client, str(WEATHER))
    assert result.exit_code == 0, result.output
    assert json.loads(path.read_text()) == golden(client)
    assert f"added 'weather' in {path}" in result.stderr


def test_mcp_json_goes_to_the_project(home: Path) -> None:
    path = Path.cwd() / ".mcp.json"
    seed(path, "mcpServers")
    assert install("mcp-json", str(WEATHER)).exit_code == 0
    assert json.loads(path.read_text()) == golden("mcp-json")


@pytest.mark.parametrize("client", ["claude-code", "cursor", "vscode"])
def test_project_scope(client: str, home: Path) -> None:
    assert install(client, str(WEATHER), "--scope", "project").exit_code == 0
    expected = {
        "claude-code": ".mcp.json",
        "cursor": ".cursor/mcp.json",
        "vscode": ".vscode/mcp.json",
    }
    document = json.loads((Path.cwd() / expected[client]).read_text())
    assert "weather" in document[FILES[client][1]]


@pytest.mark.parametrize("client", [*sorted(FILES), "mcp-json"])
def test_dry_run_writes_nothing(client: str, home: Path) -> None:
    before = sorted(p for p in home.parent.rglob("*"))
    result = install(client, str(WEATHER), "--dry-run")
    assert result.exit_code == 0, result.output
    assert sorted(p for p in home.parent.rglob("*")) == before
    header, _, body = result.stdout.partition("\n")
    assert "--dry-run: not written" in header
    key = FILES.get(client, ("", "mcpServers"))[1]
    assert json.loads(body) == {"weather": golden(client)[key]["weather"]}


def test_http_servers_headers_env_and_names(home: Path) -> None:
    url = "http://127.0.0.1:8000/mcp"
    assert install("cursor", url, "-n", "api", "-H", "Authorization: Bearer x").exit_code == 0
    entry = json.loads((home / ".cursor/mcp.json").read_text())["mcpServers"]["api"]
    assert entry == {"url": url, "headers": {"Authorization": "Bearer x"}}
    assert install("vscode", url, "-n", "api").exit_code == 0
    entry = json.loads((home / ".config/Code/User/mcp.json").read_text())["servers"]["api"]
    assert entry == {"type": "http", "url": url}
    assert install("claude-code", "uvx some-server --flag", "-e", "TOKEN=t").exit_code == 0
    entry = json.loads((home / ".claude.json").read_text())["mcpServers"]["some-server"]
    assert entry == {
        "type": "stdio",
        "command": "uvx",
        "args": ["some-server", "--flag"],
        "env": {"TOKEN": "t"},
    }


def test_reinstall_replaces_and_says_so(home: Path) -> None:
    assert install("cursor", str(WEATHER)).exit_code == 0
    again = install("cursor", str(WEATHER))
    assert "replaced 'weather'" in again.stderr
    assert list(json.loads((home / ".cursor/mcp.json").read_text())["mcpServers"]) == ["weather"]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("claude-desktop", "http://127.0.0.1:8000/mcp"), "Connectors"),
        (("claude-desktop", "x.py", "--scope", "project"), "no such file"),
        (("cursor", "nope.py"), "no such file"),
        (("cursor", "127.0.0.1:8000/mcp"), "use http://"),
        (("nowhere", "x"), "nowhere"),
    ],
)
def test_install_errors_are_one_line(argv: tuple[str, ...], words: str, home: Path) -> None:
    result = install(*argv)
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and words in result.stderr, result.stderr


def test_a_broken_config_file_is_left_alone(home: Path) -> None:
    path = home / ".cursor/mcp.json"
    path.parent.mkdir()
    path.write_text("{not json")
    result = install("cursor", str(WEATHER))
    assert result.exit_code == 1 and "is not valid JSON or JSONC (line 1" in result.stderr
    assert path.read_text() == "{not json"


@pytest.mark.parametrize(
    ("client", "platform", "environ", "expected"),
    [
        (
            "claude-desktop",
            "darwin",
            {},
            "H/Library/Application Support/Claude/claude_desktop_config.json",
        ),
        ("claude-desktop", "win32", {"APPDATA": "A"}, "A/Claude/claude_desktop_config.json"),
        (
            "claude-desktop",
            "linux",
            {"XDG_CONFIG_HOME": "X"},
            "X/Claude/claude_desktop_config.json",
        ),
        ("vscode", "darwin", {}, "H/Library/Application Support/Code/User/mcp.json"),
        ("vscode", "win32", {"APPDATA": "A"}, "A/Code/User/mcp.json"),
        ("vscode", "linux", {}, "H/.config/Code/User/mcp.json"),
        ("cursor", "win32", {}, "H/.cursor/mcp.json"),
        ("claude-code", "darwin", {}, "H/.claude.json"),
    ],
)
def test_config_paths_per_os(
    client: str, platform: str, environ: dict[str, str], expected: str
) -> None:
    path = config_path(client, home=Path("H"), cwd=Path("P"), platform=platform, environ=environ)
    assert path.as_posix() == expected


VSCODE_WITH_COMMENTS = """\
// my servers
{
  "servers": {
    "mine": {"command": "node", "args": ["mine.js",],}, // trailing commas, as VS Code allows
  },
  /* inputs VS Code prompts for */
  "inputs": [],
}
"""


def test_a_vscode_file_with_comments_is_accepted(home: Path) -> None:
    # issue 26: VS Code's files are JSONC; install refused them as "not valid JSON".
    path = home / ".config/Code/User/mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(VSCODE_WITH_COMMENTS)
    result = install("vscode", str(WEATHER))
    assert result.exit_code == 0, result.output
    document = json.loads(path.read_text())
    assert list(document["servers"]) == ["mine", "weather"] and document["inputs"] == []
    backup = path.with_name("mcp.json.bak")
    assert backup.read_text() == VSCODE_WITH_COMMENTS
    assert f"the file as it was is in {backup}" in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_plain_json_file_gets_no_backup(home: Path) -> None:
    seed(home / ".cursor/mcp.json", "mcpServers")
    assert install("cursor", str(WEATHER)).exit_code == 0
    assert not (home / ".cursor/mcp.json.bak").exists()


def _tools_json(config: Path) -> list[dict[str, Any]]:
    """`mcpkit tools --config FILE --json --held`, run as the user runs it: the tools listed,
    offered or (the server is new to the pins) awaiting approval."""
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "tools", "--config", str(config), "--json", "--held"],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    listed: list[dict[str, Any]] = [*shown["tools"], *shown["awaitingApproval"]]
    return listed


@pytest.mark.parametrize("client", [*sorted(FILES), "mcp-json"])
def test_tools_config_reads_what_install_wrote(client: str, home: Path) -> None:
    # issue 26: `tools --config` could not read VS Code's "servers" file.
    assert install(client, str(WEATHER)).exit_code == 0
    path = config_path(client, environ={})
    listed = _tools_json(path)
    assert {(t["server"], t["tool"]) for t in listed} == {("weather", "forecast")}


@pytest.mark.parametrize("client", ["claude-code", "cursor", "vscode", "mcp-json"])
def test_http_entries_install_writes_read_back(client: str, home: Path) -> None:
    from mcpkit.host import load_config

    url = "http://127.0.0.1:8000/mcp"
    assert install(client, url, "-n", "api", "-H", "Authorization: Bearer x").exit_code == 0
    server = load_config(config_path(client, environ={}), env={}).servers["api"]
    assert (server.transport, server.url) == ("http", url)
    assert server.headers == {"Authorization": "Bearer x"}
