"""Sandboxed stdio servers (`"sandbox"` in an entry, `host/sandbox.py`): the bwrap command line
alone, then a real server (tests/servers/sandbox_probe_server.py) under bubblewrap, reached
through a real host and client: files outside its paths, the network and the environment.

Where bwrap cannot run these skip with the reason; with MCPKIT_REQUIRE_BWRAP=1 (`.ci/run`)
they fail instead."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fake_npm_registry import fake_registry
from host_support import SERVERS, RecordingUI, settings_for
from mcpkit.client.stdio import StdioTransport
from mcpkit.host import ConfigError, Host, LinkState, parse_config
from mcpkit.host.models.scripted import ScriptedModel
from mcpkit.host.sandbox import Sandbox, SandboxError, bwrap_argv, launcher
from support import ROOT, scaled

PROBE = str(SERVERS / "sandbox_probe_server.py")
#: What a sandboxed Python sees besides the variables passed: bwrap sets PWD, and Python
#: sets LC_CTYPE when no locale is given (PEP 538).
ALWAYS = {"PWD", "LC_CTYPE"}


def _bwrap_runs() -> str | None:
    """None when bwrap runs here, else why not."""
    if not sys.platform.startswith("linux"):
        return f"bubblewrap needs Linux, this is {sys.platform}"
    if shutil.which("bwrap") is None:
        return "bwrap is not installed (apt-get install bubblewrap)"
    argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    done = subprocess.run([*argv, "--unshare-net", "true"], capture_output=True, text=True)
    if done.returncode != 0:
        return f"bwrap cannot make a sandbox here: {done.stderr.strip()}"
    return None


@pytest.fixture(scope="module")
def bwrap() -> None:
    reason = _bwrap_runs()
    if reason is None:
        return
    if os.environ.get("MCPKIT_REQUIRE_BWRAP"):
        pytest.fail(f"MCPKIT_REQUIRE_BWRAP is set but {reason}")
    pytest.skip(reason)


# -- the command line ------------------------------------------------------------------------
def test_the_command_line_binds_the_system_read_only_and_shares_no_network() -> None:
    sandbox = Sandbox(paths=("/srv/data",), writable=("/srv/out",))
    argv = bwrap_argv(sandbox, ["python", "s.py"], scratch="/tmp/s1", system=["/usr", "/etc"])
    assert argv[0] == "bwrap" and argv[-3:] == ["--", "python", "s.py"]
    pairs = [argv[i : i + 3] for i in range(len(argv) - 2)]
    assert ["--ro-bind", "/usr", "/usr"] in pairs and ["--ro-bind", "/etc", "/etc"] in pairs
    assert ["--ro-bind", "/srv/data", "/srv/data"] in pairs
    assert ["--bind", "/srv/out", "/srv/out"] in pairs
    assert ["--bind", "/tmp/s1", "/tmp"] in pairs  # the scratch directory
    assert "--unshare-net" in argv and "--die-with-parent" in argv
    assert argv[argv.index("--chdir") + 1] == "/tmp"
    assert not any(a in ("--bind", "--ro-bind") and b == "/" for a, b in itertools.pairwise(argv))


def test_network_and_working_directory_are_as_the_entry_says() -> None:
    sandbox = Sandbox(network=True)
    argv = bwrap_argv(sandbox, ["srv"], scratch="/s", cwd="/srv/app", system=[])
    assert "--unshare-net" not in argv
    assert argv[argv.index("/srv/app") - 1 :][:3] == ["--ro-bind", "/srv/app", "/srv/app"]
    assert argv[argv.index("--chdir") + 1] == "/srv/app"


def test_the_sandbox_entry_is_checked_when_the_config_is_read() -> None:
    entry: dict[str, Any] = {"command": "python", "args": ["s.py"]}
    parsed = parse_config({"mcpServers": {"s": {**entry, "sandbox": {"paths": ["/srv"]}}}})
    assert parsed.servers["s"].sandbox == Sandbox(paths=("/srv",))
    assert (
        parse_config({"mcpServers": {"s": {**entry, "sandbox": True}}}).servers["s"].sandbox
        == Sandbox()
    )
    for wrong, says in [
        ({"paths": ["relative/dir"]}, "absolute paths"),
        ({"network": "yes"}, "true or false"),
        ({"env": "PATH"}, "list of strings"),
        ({"mounts": []}, "unknown keys"),
    ]:
        with pytest.raises(ConfigError, match=says):
            parse_config({"mcpServers": {"s": {**entry, "sandbox": wrong}}})
    with pytest.raises(ConfigError, match="local \\(stdio\\) server"):
        parse_config({"mcpServers": {"h": {"url": "http://127.0.0.1:1/mcp", "sandbox": {}}}})


def test_a_missing_bubblewrap_or_another_system_is_one_clear_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    with pytest.raises(SandboxError) as missing:
        launcher()
    assert "apt-get install bubblewrap" in str(missing.value) and "\n" not in str(missing.value)
    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(SandboxError, match="needs Linux"):
        launcher()


# -- a real server under bubblewrap ---------------------------------------------------------
def _entry(sandbox: dict[str, Any] | None, **more: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": sys.executable, "args": [PROBE], **more}
    if sandbox is not None:
        # The server's Python and this checkout (the venv, mcpkit's source) are visible.
        paths = [str(ROOT), sys.base_prefix, *sandbox.pop("paths", [])]
        entry["sandbox"] = {"paths": paths, "env": ["PATH"], **sandbox}
    return entry


@contextlib.asynccontextmanager
async def _host(tmp_path: Path, **servers: dict[str, Any]) -> AsyncIterator[Host]:
    config = parse_config({"mcpServers": servers})
    settings = settings_for(config, tmp_path, pins=tmp_path / "pins.json")
    async with Host(config, model=ScriptedModel([]), ui=RecordingUI(), settings=settings) as host:
        for link in host.fleet.links.values():
            async with asyncio.timeout(scaled(30)):
                state = await link.until(LinkState.READY, LinkState.DOWN)
            assert state is LinkState.READY, link.detail
        yield host


async def _call(host: Host, server: str, tool: str, **arguments: Any) -> str:
    client = host.fleet.links[server].client
    assert client is not None
    return (await client.call_tool(tool, arguments)).text


async def test_a_sandboxed_server_reads_only_its_paths(bwrap: None, tmp_path: Path) -> None:
    (tmp_path / "allowed").mkdir()
    (tmp_path / "allowed/notes.txt").write_text("allowed")
    (tmp_path / "out").mkdir()
    (tmp_path / "secret.txt").write_text("secret")
    box = {"paths": [str(tmp_path / "allowed")], "writable": [str(tmp_path / "out")]}
    async with _host(tmp_path, box=_entry(box), open=_entry(None)) as host:
        secret = str(tmp_path / "secret.txt")
        assert await _call(host, "open", "read_file", path=secret) == "read: secret"
        assert (await _call(host, "box", "read_file", path=secret)).startswith("refused")
        notes = str(tmp_path / "allowed/notes.txt")
        assert await _call(host, "box", "read_file", path=notes) == "read: allowed"
        # The chosen paths are read-only; `writable` ones and the scratch directory are not.
        assert (await _call(host, "box", "write_scratch", path=notes)).startswith("refused")
        written = await _call(host, "box", "write_scratch", path=str(tmp_path / "out/w.txt"))
        assert written.startswith("written") and (tmp_path / "out/w.txt").read_text() == "written"
        assert await _call(host, "box", "write_scratch", path="s.txt") == "written: /tmp/s.txt"
        scratch = host.fleet.links["box"].launch._scratch
        assert scratch is not None and (Path(scratch) / "s.txt").exists()
    assert not os.path.exists(scratch)  # noqa: ASYNC240 - removed when the server stopped


async def _listening() -> tuple[asyncio.Server, int, asyncio.Event]:
    accepted = asyncio.Event()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.set()
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], accepted


async def test_a_sandboxed_server_opens_no_connection_unless_allowed(
    bwrap: None, tmp_path: Path
) -> None:
    listener, port, accepted = await _listening()
    async with listener:
        shut, open_ = _entry({}), _entry({"network": True})
        async with _host(tmp_path, shut=shut, net=open_) as host:
            assert (await _call(host, "shut", "connect", port=port)).startswith("refused")
            assert not accepted.is_set()
            assert await _call(host, "net", "connect", port=port) == "connected"
            async with asyncio.timeout(scaled(10)):
                await accepted.wait()


async def test_a_sandboxed_server_sees_only_the_listed_environment(
    bwrap: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPKIT_TEST_SECRET", "not for the server")
    monkeypatch.setenv("MCPKIT_TEST_PASSED", "passed on")
    box = _entry({"env": ["PATH", "MCPKIT_TEST_PASSED"]}, env={"FROM_ENTRY": "set"})
    async with _host(tmp_path, box=box, open=_entry(None)) as host:
        seen = set((await _call(host, "box", "environment")).split(","))
        assert seen - ALWAYS == {"PATH", "MCPKIT_TEST_PASSED", "FROM_ENTRY"}
        assert await _call(host, "box", "variable", name="MCPKIT_TEST_PASSED") == "passed on"
        assert await _call(host, "box", "variable", name="FROM_ENTRY") == "set"
        assert "MCPKIT_TEST_SECRET" in (await _call(host, "open", "environment")).split(",")
        # Nor are the values on the launcher's command line, which any local user can read.
        client = host.fleet.links["box"].client
        assert client is not None and isinstance(client.transport, StdioTransport)
        assert Path(client.transport.command[0]).name == "bwrap"
        assert "passed on" not in " ".join(client.transport.command)


async def test_a_sandbox_without_bubblewrap_fails_the_start_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    config = parse_config({"mcpServers": {"box": _entry({})}})
    ui = RecordingUI()
    settings = settings_for(config, tmp_path, pins=tmp_path / "pins.json")
    async with Host(config, model=ScriptedModel([]), ui=ui, settings=settings) as host:
        link = host.fleet.links["box"]
        async with asyncio.timeout(scaled(30)):
            assert await link.until(LinkState.DOWN) is LinkState.DOWN
        assert link.detail is not None and "bubblewrap (bwrap) is not installed" in link.detail
        assert link.retry_in is None  # nothing to retry until the user installs it


async def test_an_npx_server_is_installed_outside_the_sandbox_and_runs_inside(
    bwrap: None, tmp_path: Path
) -> None:
    async with fake_registry("probe-mcp", PROBE, "1.0.0") as registry:
        port = int(registry.url.rsplit(":", 1)[1].strip("/"))
        entry = {
            "command": "npx",
            "args": ["-y", "probe-mcp"],
            "env": registry.env(tmp_path / "npm-cache"),
            "sandbox": {"paths": [str(ROOT), sys.base_prefix]},
        }
        async with _host(tmp_path, box=entry) as host:
            assert "/probe-mcp/-/probe-mcp-1.0.0.tgz" in registry.requests  # installed...
            client = host.fleet.links["box"].client
            assert client is not None and isinstance(client.transport, StdioTransport)
            command = client.transport.command
            assert Path(command[0]).name == "bwrap" and command[-1].endswith(".bin/probe-mcp")
            # ...and run where the registry (on this machine's loopback) is out of reach.
            assert (await _call(host, "box", "connect", port=port)).startswith("refused")
        assert (tmp_path / "sandbox-packages/probe-mcp@1.0.0").is_dir()  # kept for next time
