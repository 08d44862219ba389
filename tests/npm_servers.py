"""Published MCP servers from npm for the gateway's interop test, pinned, installed once with
npm into the repository's `.cache/npm-servers/` and reused (`make clean` removes it).

Without npm, or offline, the test that needs them skips with one line saying what to do; where
`MCPKIT_REQUIRE_NPM_SERVERS` or `CI` is set (`.ci/run`) it fails instead.
"""

from __future__ import annotations

from pathlib import Path

from npm_support import npm_install
from support import ROOT

#: The reference servers (2025-11-25 servers: they answer `initialize` with that version).
PACKAGES = {
    "everything": ("@modelcontextprotocol/server-everything", "2026.8.31"),
    "filesystem": ("@modelcontextprotocol/server-filesystem", "2026.8.31"),
    "memory": ("@modelcontextprotocol/server-memory", "2026.8.31"),
}
CACHE = ROOT / ".cache/npm-servers"


def npm_servers() -> dict[str, Path]:
    """Each server's launcher (`node_modules/.bin/mcp-server-<name>`) of a repo-local install
    of the pinned versions."""
    specs = [f"{package}@{version}" for package, version in PACKAGES.values()]
    npm_install(CACHE, specs, "the reference MCP servers", "MCPKIT_REQUIRE_NPM_SERVERS")
    return {name: CACHE / f"node_modules/.bin/mcp-server-{name}" for name in PACKAGES}
