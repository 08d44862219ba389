"""The MCP Inspector CLI (`@modelcontextprotocol/inspector`) for the interop tests, installed
once with npm into the repository's `.cache/inspector/` and reused (`make clean` removes it).

Without npm, or offline, a test that needs it skips with one line saying what to do; where
`MCPKIT_REQUIRE_INSPECTOR` or `CI` is set (`.ci/run`) it fails instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support import ROOT, cache_lock, scaled

VERSION = "2.12.0"
CACHE = ROOT / ".cache/inspector"


def _required() -> bool:
    return bool(os.environ.get("MCPKIT_REQUIRE_INSPECTOR") or os.environ.get("CI"))


def inspector_cli() -> Path:
    """The `mcp-inspector` launcher of a repo-local install of the pinned version."""
    launcher = CACHE / "node_modules/.bin/mcp-inspector"
    with cache_lock(CACHE):  # one npm install at a time (pytest -n)
        if not (CACHE / f".ready-{VERSION}").exists() or not launcher.exists():
            _install()
    return launcher


def _install() -> None:
    npm = shutil.which("npm")
    if npm is None:
        if _required():
            raise RuntimeError("npm is required for the MCP Inspector interop tests")
        pytest.skip("needs npm (Node.js) to install the MCP Inspector CLI; apt-get install npm")
    try:
        subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(CACHE),
                "--no-audit",
                "--no-fund",
                f"@modelcontextprotocol/inspector@{VERSION}",
            ],
            check=True,
            timeout=scaled(900),
            capture_output=True,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        if _required():
            raise
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        last = stderr.strip().splitlines()[-1] if stderr.strip() else str(exc)
        pytest.skip(f"cannot install the MCP Inspector with npm ({last}); go online")
    (CACHE / f".ready-{VERSION}").touch()
