"""`mcpkit dev TARGET` and `mcpkit ui` with no model key: the TARGET forms (a server file, a
command, a URL), the address printed, the page opening in the inspector, and the chat saying
in one line how to set a model instead of the command refusing to start."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from dev_support import PageAPI, mcpkit
from mcpkit.cli.dev import dev_server
from support import ROOT, scaled

WEATHER = ROOT / "examples" / "weather_server.py"


def test_a_server_file_is_run_by_this_python_and_watched() -> None:
    entry, watched = dev_server("examples/weather_server.py", None)
    assert entry["name"] == "weather_server"
    assert entry["command"] == sys.executable
    assert entry["args"][:3] == ["-m", "mcpkit", "run"] and entry["args"][3] == str(WEATHER)
    assert watched == WEATHER


def test_a_command_after_the_dashes_is_named_for_its_package() -> None:
    tail = ["npx", "-y", "@modelcontextprotocol/server-basic-vanillajs@2.0.4", "--stdio"]
    entry, watched = dev_server(None, tail)
    assert entry == {
        "name": "server-basic-vanillajs",
        "command": "npx",
        "args": tail[1:],
    }
    assert watched is None
    quoted, _ = dev_server("node build/server.js", None)
    assert quoted == {"name": "server", "command": "node", "args": ["build/server.js"]}
    # A package's entry file says nothing: the server is named for its package's folder.
    built = ".cache/npm-apps/node_modules/@modelcontextprotocol/server-pdf/dist/index.js"
    entry, _ = dev_server(None, ["node", built, "--stdio"])
    assert entry["name"] == "server-pdf"


def test_a_url_is_an_http_server() -> None:
    entry, watched = dev_server("http://127.0.0.1:8000/mcp", None)
    assert entry == {"name": "127.0.0.1", "url": "http://127.0.0.1:8000/mcp"}
    assert watched is None


def test_a_missing_server_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^no server file nowhere\.py \(give a \.py file"):
        dev_server("nowhere.py", None)
    with pytest.raises(ValueError, match="looks like a URL without its scheme"):
        dev_server("localhost:8000", None)


async def until_ready(api: PageAPI) -> dict[str, object]:
    """The state once every server is ready (the host may still be connecting)."""
    async with asyncio.timeout(scaled(30)):
        while True:
            status, state = await api.get("/api/state")
            assert status == 200, state
            if all(s["state"] == "ready" for s in state["servers"]):
                return state
            await asyncio.sleep(0.1)  # polling the page's own API: readiness, not a pause


async def test_dev_opens_the_inspector_without_a_model_key(tmp_path: Path) -> None:
    async with mcpkit("examples/weather_server.py", "--no-open", tmp_path=tmp_path) as dev:
        assert dev.url.startswith("http://127.0.0.1:") and "?token=" in dev.url
        assert dev.lines[0].startswith("mcpkit dev: open http://127.0.0.1:")
        assert "watching weather_server.py" in dev.lines[1]
        async with PageAPI.login(dev.url) as api:
            state = await until_ready(api)
            assert state["view"] == "inspector"
            assert [s["name"] for s in state["servers"]] == ["weather_server"]  # type: ignore[index]
            hint = state["modelHint"]
            assert isinstance(hint, str) and "ANTHROPIC_API_KEY" in hint and "--model" in hint
            status, catalogue = await api.get("/api/inspect/weather_server")
            assert status == 200 and [t["name"] for t in catalogue["tools"]] == ["forecast"]
            # The chat answers in one line how to set a model; nothing is sent anywhere.
            status, refused = await api.post("/api/chat", {"text": "weather in Oslo?"})
            assert status == 409 and refused["error"] == hint and "\n" not in hint


async def test_dev_on_a_port_given(tmp_path: Path) -> None:
    from support import free_port

    port = free_port()
    async with mcpkit(
        *["--port", str(port), "--no-open", "--"],
        *[sys.executable, "-m", "mcpkit", "run", str(WEATHER)],
        tmp_path=tmp_path,
    ) as dev:
        assert dev.base == f"http://127.0.0.1:{port}"


async def test_ui_starts_without_a_model_key(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": ["-m", "mcpkit", "run", str(WEATHER)]}
    server["trustNewTools"] = True  # a new server's tools are offered without approval
    config.write_text(json.dumps({"mcpServers": {"weather": server}}))
    async with mcpkit("--config", str(config), tmp_path=tmp_path, command="ui") as ui:
        assert "model: no model" in ui.lines[1]
        async with PageAPI.login(ui.url) as api:
            state = await until_ready(api)
            assert state["view"] == "chat" and state["modelHint"]
            tools = state["tools"]
            assert tools == [  # the empty chat's example prompts come from these
                {
                    "server": "weather",
                    "tool": "forecast",
                    "description": "Forecast for a city, one entry per day.",
                }
            ]


async def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    import socket

    from dev_support import keyless_env

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        proc = await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "mcpkit.cli", "dev", str(WEATHER), "--no-open"],
            *["--port", str(port)],
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=keyless_env(tmp_path),
            cwd=ROOT,
        )
        out, err = await asyncio.wait_for(proc.communicate(), scaled(60))
    assert proc.returncode == 1 and not out
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and f"cannot listen on 127.0.0.1:{port}" in lines[0], lines


@pytest.mark.parametrize("command", ["dev", "ui"])
async def test_base_url_gives_a_keyless_local_model(command: str, tmp_path: Path) -> None:
    """`--model openai:NAME --base-url URL` on `mcpkit dev` and `mcpkit ui`: a local
    OpenAI-compatible server needs no key (nothing listens there: no turn is asked)."""
    url = "http://127.0.0.1:9/v1"
    if command == "dev":
        args = [str(WEATHER), "--no-open"]
    else:
        config = tmp_path / "mcp.json"
        server = {"command": sys.executable, "args": ["-m", "mcpkit", "run", str(WEATHER)]}
        config.write_text(json.dumps({"mcpServers": {"weather": server}}))
        args = ["--config", str(config)]
    async with mcpkit(
        *args, "--model", "openai:llama3.1", "--base-url", url, tmp_path=tmp_path, command=command
    ) as running:
        assert "openai:llama3.1" in running.lines[-1]
