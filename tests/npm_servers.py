"""Published MCP servers from npm for the gateway's interop test, pinned, installed once with
npm into the repository's `.cache/npm-servers/` and reused (`make clean` removes it).

Without npm, or offline, the test that needs them skips with one line saying what to do; where
`MCPKIT_REQUIRE_NPM_SERVERS` or `CI` is set (`.ci/run`) it fails instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support import ROOT

#: The reference servers (2025-11-25 servers: they answer `initialize` with that version).
PACKAGES = {
    "everything": ("@modelcontextprotocol/server-everything", "2026.8.31"),
    "filesystem": ("@modelcontextprotocol/server-filesystem", "2026.8.31"),
    "memory": ("@modelcontextprotocol/server-memory", "2026.8.31"),
}
CACHE = ROOT / ".cache/npm-servers"


def _required() -> bool:
    return bool(os.environ.get("MCPKIT_REQUIRE_NPM_SERVERS") or os.environ.get("CI"))


def npm_servers() -> dict[str, Path]:
    """Each server's launcher (`node_modules/.bin/mcp-server-<name>`) of a repo-local install
    of the pinned versions."""
    launchers = {name: CACHE / f"node_modules/.bin/mcp-server-{name}" for name in PACKAGES}
    pinned = "-".join(version for _, version in PACKAGES.values())
    stamp = CACHE / f".ready-{pinned}"
    if stamp.exists() and all(p.exists() for p in launchers.values()):
        return launchers
    npm = shutil.which("npm")
    if npm is None:
        if _required():
            raise RuntimeError("npm is required for the gateway's npm server interop test")
        pytest.skip("needs npm (Node.js) to install the reference MCP servers; apt-get install npm")
    CACHE.mkdir(parents=True, exist_ok=True)
    specs = [f"{package}@{version}" for package, version in PACKAGES.values()]
    try:
        subprocess.run(
            [npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", *specs],
            check=True,
            timeout=900,
            capture_output=True,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        if _required():
            raise
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        last = stderr.strip().splitlines()[-1] if stderr.strip() else str(exc)
        pytest.skip(f"cannot install the reference MCP servers with npm ({last}); go online")
    stamp.touch()
    return launchers
