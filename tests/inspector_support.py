"""The MCP Inspector CLI (`@modelcontextprotocol/inspector`) for the interop tests, installed
once with npm into the repository's `.cache/inspector/` and reused (`make clean` removes it).

Without npm, or offline, a test that needs it skips with one line saying what to do; where
`MCPKIT_REQUIRE_INSPECTOR` or `CI` is set (`.ci/run`) it fails instead.
"""

from __future__ import annotations

from pathlib import Path

from npm_support import npm_install
from support import ROOT

VERSION = "2.12.0"
CACHE = ROOT / ".cache/inspector"


def inspector_cli() -> Path:
    """The `mcp-inspector` launcher of a repo-local install of the pinned version."""
    specs = [f"@modelcontextprotocol/inspector@{VERSION}"]
    npm_install(CACHE, specs, "the MCP Inspector CLI", "MCPKIT_REQUIRE_INSPECTOR")
    return CACHE / "node_modules/.bin/mcp-inspector"
