"""Interop: `mcpkit gateway` in front of published npm servers of the 2025-11-25 protocol (the
reference `server-everything`, `server-filesystem` and `server-memory`, pinned in
`npm_servers.py`) and a local stdio server with a published server's schema quirk (no npm
server installable here still had one: `tests/servers/quirky_legacy_server.py`), driven by the
official Python SDK client (`mcp` 2.3.0) with the gateway's front in 2026-07-28 (`auto`) and
2025-11-25 (`legacy`): every list, tool calls on each server, a resource read and a prompt,
each result validated by the SDK against its era's types.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

import interop_support
from npm_servers import npm_servers
from support import ROOT, free_port, scaled, wait_port

CLIENT = ROOT / "tests/interop/sdk_fleet_client.py"
QUIRKY = ROOT / "tests/servers/quirky_legacy_server.py"


@pytest.fixture(scope="module")
def sdk_python() -> str:
    return str(interop_support.sdk_python("2.3.0", "uvicorn", override_env="MCPKIT_INTEROP_SDK_PY"))


def fleet(tmp: Path) -> dict[str, Any]:
    launchers = npm_servers()
    allow = {"consent": {"allow": ["*"]}}
    return {
        "host": {"startupTimeout": scaled(60)},  # the port opens once every server is up
        "mcpServers": {
            "everything": {"command": str(launchers["everything"]), **allow},
            "filesystem": {"command": str(launchers["filesystem"]), "args": [str(tmp)], **allow},
            "memory": {
                "command": str(launchers["memory"]),
                "env": {"MEMORY_FILE_PATH": str(tmp / "memory.jsonl")},
                **allow,
            },
            "quirky": {
                "command": sys.executable,
                "args": [str(QUIRKY), "loose-schemas", "no-templates", "ask-roots"],
                **allow,
            },
        },
    }


async def test_the_official_sdk_client_through_the_gateway_over_npm_servers(
    sdk_python: str, tmp_path: Path
) -> None:
    files = tmp_path / "files"
    files.mkdir()
    (files / "hello.txt").write_text("hello\n")
    config = tmp_path / "gateway.json"
    config.write_text(json.dumps(fleet(files)))
    port, log = free_port(), tmp_path / "gateway.log"
    with log.open("wb") as err:
        gateway = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "mcpkit", "gateway", "--config", str(config),
            "--port", str(port), "--log-level", "info",
            cwd=ROOT, env={**os.environ}, stdout=asyncio.subprocess.DEVNULL, stderr=err,
        )  # fmt: skip
    try:
        await wait_port(port, gateway, 90)
        for mode, version in (("auto", "2026-07-28"), ("legacy", "2025-11-25")):
            client = await asyncio.create_subprocess_exec(
                sdk_python, str(CLIENT), f"http://127.0.0.1:{port}/mcp", mode, str(files),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            out, err_out = await asyncio.wait_for(client.communicate(), scaled(120))
            assert client.returncode == 0, (mode, err_out.decode()[-3000:], log.read_text()[-3000:])
            check(json.loads(out.decode().strip().splitlines()[-1]), version)
    finally:
        if gateway.returncode is None:
            gateway.terminate()
        await asyncio.wait_for(gateway.wait(), scaled(20))
    shown = log.read_text()
    assert "Traceback" not in shown and " ERROR " not in shown, shown[-3000:]
    assert shown.count("'scalar' is withheld") == 1, shown[-3000:]


def check(seen: dict[str, Any], version: str) -> None:
    assert seen["protocolVersion"] == version
    tools = seen["tools"]
    for name in ("everything__echo", "filesystem__list_directory", "memory__read_graph"):
        assert name in tools, tools
    assert "quirky__search" in tools and "quirky__scalar" not in tools  # repaired; withheld
    assert len(tools) > 30  # nothing else lost
    assert any(uri.startswith("everything+demo://") for uri in seen["resources"])
    assert any(t.startswith("everything+demo://") for t in seen["templates"])
    assert any(p.startswith("everything__") for p in seen["prompts"])
    assert seen["echo"] == [False, "Echo: hi"]
    assert seen["structured"][0] is False
    assert seen["links"][0] is False
    assert seen["listing"] == [False, "[FILE] hello.txt"]
    assert seen["graph"][0] is False
    assert seen["search"] == [False, "found: milk"]
    assert seen["read"][1] >= 1
    assert seen["prompt"][1] >= 1
