"""Provenance of packaged servers (`host/provenance.py`): which package an entry runs, the
version recorded at its first start, and a newer one reported (or refused) at a later start.
The registry is a stand-in on loopback (tests/fake_npm_registry.py) that `npm view` and `npx`
really talk to; no test reaches the network."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fake_npm_registry import FakeRegistry, fake_registry
from host_support import SERVERS, RecordingUI, settings_for
from mcpkit.cli.main import app
from mcpkit.host import ConfigError, Host, LinkState, parse_config
from mcpkit.host.models.scripted import ScriptedModel
from mcpkit.host.provenance import Origin, origin_of, resolve
from support import free_port, scaled

BASIC = str(SERVERS / "basic_server.py")


@pytest.mark.parametrize(
    ("command", "args", "origin", "exact"),
    [
        ("npx", ["-y", "@acme/files-mcp"], Origin("npm", "@acme/files-mcp"), None),
        ("npx", ["-y", "files-mcp@1.4.2"], Origin("npm", "files-mcp", "1.4.2"), "1.4.2"),
        ("npx", ["-y", "files-mcp@latest"], Origin("npm", "files-mcp", "latest"), None),
        ("npx", ["-p", "kit@^2", "kit-server"], Origin("npm", "kit", "^2"), None),
        ("bunx", ["files-mcp@1.0.0"], Origin("npm", "files-mcp", "1.0.0"), "1.0.0"),
        ("pnpm", ["dlx", "files-mcp"], Origin("npm", "files-mcp"), None),
        ("uvx", ["mcp-server-time"], Origin("pypi", "mcp-server-time"), None),
        ("uvx", ["mcp-server-time@0.6.2"], Origin("pypi", "mcp-server-time", "0.6.2"), "0.6.2"),
        ("uvx", ["--from", "git-mcp==1.0", "git-mcp"], Origin("pypi", "git-mcp", "1.0"), "1.0"),
        ("uvx", ["-p", "3.12", "tool"], Origin("pypi", "tool"), None),
        ("pipx", ["run", "tool>=2"], Origin("pypi", "tool", ">=2"), None),
        (
            "docker",
            ["run", "-i", "--rm", "-e", "K", "mcp/fetch"],
            Origin("docker", "mcp/fetch"),
            None,
        ),
        ("docker", ["run", "reg:5000/a/b:1"], Origin("docker", "reg:5000/a/b", "1"), None),
        ("docker", ["run", "a/b@sha256:ab"], Origin("docker", "a/b", "sha256:ab"), "sha256:ab"),
    ],
)
def test_the_package_an_entry_runs(
    command: str, args: list[str], origin: Origin, exact: str | None
) -> None:
    assert origin_of(command, args) == origin
    assert origin.exact == exact


def test_entries_that_run_no_package_have_no_origin() -> None:
    assert origin_of("python", ["server.py"]) is None
    assert origin_of("/usr/bin/node", ["server.js"]) is None
    assert origin_of("docker", ["compose", "up"]) is None
    assert origin_of("npm", ["start"]) is None


def test_the_provenance_setting_is_checked() -> None:
    entry: dict[str, Any] = {"command": "npx", "args": ["-y", "pkg"]}
    assert parse_config({"mcpServers": {"s": entry}}).servers["s"].provenance == "warn"
    refuse = {**entry, "provenance": "refuse"}
    assert parse_config({"mcpServers": {"s": refuse}}).servers["s"].provenance == "refuse"
    with pytest.raises(ConfigError, match='"warn", "refuse" or "off"'):
        parse_config({"mcpServers": {"s": {**entry, "provenance": "strict"}}})


def _npm_env(registry: FakeRegistry, tmp_path: Path) -> dict[str, str]:
    return registry.env(tmp_path / "npm-cache")


async def test_what_an_unpinned_package_resolves_to(tmp_path: Path) -> None:
    async with fake_registry("files-mcp", BASIC, "1.0.0") as registry:
        env = _npm_env(registry, tmp_path)
        assert await resolve(Origin("npm", "files-mcp"), env) == "1.0.0"
        registry.publish("1.1.0")
        assert await resolve(Origin("npm", "files-mcp"), env) == "1.1.0"
        assert await resolve(Origin("npm", "files-mcp", "~1.0.0"), env) == "1.0.0"
        assert await resolve(Origin("npm", "files-mcp", "1.0.0"), env) == "1.0.0"


async def test_an_unreachable_registry_is_said_clearly(tmp_path: Path) -> None:
    async with fake_registry("files-mcp", BASIC, "1.0.0") as registry:
        env = _npm_env(registry, tmp_path)
    env["npm_config_registry"] = f"http://127.0.0.1:{free_port()}/"
    with pytest.raises(RuntimeError) as failed:
        await resolve(Origin("npm", "files-mcp"), env, timeout=scaled(30))
    assert str(failed.value).startswith("cannot tell which version of files-mcp would run")


async def _start(tmp_path: Path, entry: dict[str, Any]) -> tuple[LinkState, RecordingUI, str]:
    """Start a host with the one server `files`; its state once settled, the UI, the detail."""
    # The pin file sits beside provenance.json; the server's tools are trusted (no quarantine).
    config = parse_config({"mcpServers": {"files": {**entry, "trustNewTools": True}}})
    ui = RecordingUI()
    settings = settings_for(config, tmp_path, pins=tmp_path / "pins.json")
    async with Host(config, model=ScriptedModel([]), ui=ui, settings=settings) as host:
        link = host.fleet.links["files"]
        async with asyncio.timeout(scaled(60)):
            state = await link.until(LinkState.READY, LinkState.DOWN)
        if state is LinkState.READY:
            assert link.client is not None
            assert (await link.client.call_tool("echo", {"text": "hi"})).text == "hi"
        return state, ui, link.detail or ""


def _recorded(tmp_path: Path) -> dict[str, Any]:
    document = json.loads((tmp_path / "provenance.json").read_text())
    return dict(document["servers"]["files"])


async def test_a_newer_version_of_a_package_is_reported(tmp_path: Path) -> None:
    async with fake_registry("files-mcp", BASIC, "1.0.0") as registry:
        entry = {"command": "npx", "args": ["-y", "files-mcp"], "env": _npm_env(registry, tmp_path)}
        state, ui, _ = await _start(tmp_path, entry)
        assert state is LinkState.READY and ui.of("warn") == []
        assert _recorded(tmp_path) == {"kind": "npm", "package": "files-mcp", "version": "1.0.0"}

        registry.publish("1.1.0")  # what `npx files-mcp` would now run
        state, ui, _ = await _start(tmp_path, entry)
        assert state is LinkState.READY  # warned, not refused
        [warning] = [w for w in ui.of("warn") if "files-mcp" in w]
        assert "would now run 1.1.0, not 1.0.0" in warning and "files-mcp@1.0.0" in warning
        assert _recorded(tmp_path)["version"] == "1.0.0"  # the approved one stays

        fetched = list(registry.requests)
        state, ui, detail = await _start(tmp_path, {**entry, "provenance": "refuse"})
        assert state is LinkState.DOWN and "would now run 1.1.0" in detail
        assert "refused" in detail and "\n" not in detail
        assert not any(p.endswith(".tgz") for p in registry.requests[len(fetched) :])

        # Accepting the new version: forget the record; the next start records 1.1.0.
        pins = ["--pins", str(tmp_path / "pins.json")]
        listed = CliRunner().invoke(app, ["pins", "provenance", *pins])
        assert listed.exit_code == 0 and "files-mcp\t1.0.0" in listed.output
        forgot = CliRunner().invoke(app, ["pins", "provenance", "--forget", "files", *pins])
        assert forgot.exit_code == 0, forgot.output
        state, ui, detail = await _start(tmp_path, {**entry, "provenance": "refuse"})
        assert state is LinkState.READY, detail
        assert _recorded(tmp_path)["version"] == "1.1.0"


async def test_an_entry_naming_its_version_is_pinned_already(tmp_path: Path) -> None:
    async with fake_registry("files-mcp", BASIC, "1.0.0", "1.1.0") as registry:
        env = _npm_env(registry, tmp_path)
        pinned = {"command": "npx", "args": ["-y", "files-mcp@1.0.0"], "env": env}
        state, ui, _ = await _start(tmp_path, {**pinned, "provenance": "refuse"})
        assert state is LinkState.READY and ui.of("warn") == []
        assert _recorded(tmp_path)["version"] == "1.0.0"
        assert "/files-mcp/-/files-mcp-1.0.0.tgz" in registry.requests


async def test_an_unresolvable_version_is_a_warning(tmp_path: Path) -> None:
    async with fake_registry("files-mcp", BASIC, "1.0.0") as registry:
        env = _npm_env(registry, tmp_path)
    env["npm_config_registry"] = f"http://127.0.0.1:{free_port()}/"  # nothing listens
    _, ui, _ = await _start(tmp_path, {"command": "npx", "args": ["-y", "files-mcp"], "env": env})
    [warning] = [w for w in ui.of("warn") if "cannot tell" in w]  # (and the start failed)
    assert warning.startswith("server 'files': cannot tell which version of files-mcp")
    assert warning.endswith("its provenance is not checked this time")


async def test_a_server_run_from_a_file_is_not_checked(tmp_path: Path) -> None:
    state, ui, _ = await _start(tmp_path, {"command": sys.executable, "args": [BASIC]})
    assert state is LinkState.READY and ui.of("warn") == []
    assert not (tmp_path / "provenance.json").exists()


def test_install_writes_the_version_that_runs_today(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def serve_and_install() -> tuple[Any, Any]:
        async with fake_registry("files-mcp", BASIC, "1.0.0", "1.2.0") as registry:
            for name, value in _npm_env(registry, tmp_path).items():
                monkeypatch.setenv(name, value)
            argv = ["install", "mcp-json", "--file", str(tmp_path / "mcp.json")]
            loose = await asyncio.to_thread(CliRunner().invoke, app, [*argv, "npx -y files-mcp"])
            exact = "npx -y files-mcp@1.0.0"
            fixed = await asyncio.to_thread(CliRunner().invoke, app, [*argv, "-n", "old", exact])
            return loose, fixed

    loose, fixed = asyncio.run(serve_and_install())
    assert loose.exit_code == 0 and "pinned files-mcp to 1.2.0" in loose.stderr
    assert fixed.exit_code == 0 and "pinned" not in fixed.stderr
    servers = json.loads((tmp_path / "mcp.json").read_text())["mcpServers"]
    assert servers["files-mcp"]["args"] == ["-y", "files-mcp@1.2.0"]
    assert servers["old"]["args"] == ["-y", "files-mcp@1.0.0"]


def test_install_offline_writes_the_entry_unpinned_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("npm_config_registry", f"http://127.0.0.1:{free_port()}/")
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    argv = ["install", "mcp-json", "--file", str(tmp_path / "mcp.json"), "npx -y files-mcp"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    assert "note: cannot tell which version of files-mcp would run" in result.stderr
    servers = json.loads((tmp_path / "mcp.json").read_text())["mcpServers"]
    assert servers["files-mcp"]["args"] == ["-y", "files-mcp"]
