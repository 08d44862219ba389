"""What happens before a stdio server is spawned: its package's provenance is checked
(`provenance.py`) and, with `"sandbox"`, its command is wrapped in bubblewrap with a fresh
scratch directory (`sandbox.py`), removed when the server stops; a sandboxed `npx` package is
installed outside the sandbox first (`packages.py`)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .config import ServerConfig
from .packages import installed_command
from .paths import state_path
from .provenance import ProvenanceRefused, ProvenanceStore, origin_of, resolve
from .sandbox import SandboxError, sandboxed_target

#: What a start refused for a reason the user must settle first (no retry helps).
REFUSED: tuple[type[Exception], ...] = (ProvenanceRefused, SandboxError)

__all__ = ["Launch", "check_provenance"]


async def check_provenance(
    config: ServerConfig, store: ProvenanceStore, warn: Callable[[str], None]
) -> str | None:
    """Record the version a packaged server runs the first time; warn (or raise
    ProvenanceRefused, with `"provenance": "refuse"`) when it has moved since. Returns the
    version that runs (None: not a package, not checked, or not known)."""
    if config.provenance == "off" or config.command is None:
        return None
    origin = origin_of(config.command, config.args)
    if origin is None:
        return None
    try:
        version = await resolve(origin, config.env)
    except RuntimeError as exc:
        warn(f"server {config.name!r}: {exc}; its provenance is not checked this time")
        return None
    recorded = store.get(config.name)
    if recorded is None or recorded.get("package") != origin.package or origin.exact:
        store.record(config.name, origin, version)  # first use, or what the entry now names
        return version
    if recorded.get("version") == version:
        return version
    message = (
        f"server {config.name!r}: {origin.kind} package {origin.package} would now run "
        f"{version}, not {recorded.get('version')} as when first approved; pin "
        f"{_pinned(origin.kind, origin.package, str(recorded.get('version')))} in its entry, or "
        f"accept the new version with: mcpkit pins provenance --forget {config.name}"
    )
    if config.provenance == "refuse":
        raise ProvenanceRefused(f"{message} (refused: its entry says provenance refuse)")
    warn(message)
    return version


def _pinned(kind: str, package: str, version: str) -> str:
    joint = {"npm": "@", "pypi": "==", "docker": "@"}[kind]
    return f"{package}{joint}{version}"


class Launch:
    """One server's start-up preparation; `release` undoes it when the server stops."""

    def __init__(
        self, config: ServerConfig, pins: Path | None, warn: Callable[[str], None]
    ) -> None:
        self.config = config
        self.store = ProvenanceStore.beside(pins)
        #: Where sandboxed `npx` packages are installed (beside the pins).
        self.packages = pins.with_name("sandbox-packages") if pins else state_path("packages")
        self.warn = warn
        self._checked = False
        self._version: str | None = None
        self._scratch: str | None = None

    async def target(self) -> dict[str, Any]:
        """The client target to connect with (provenance checked on the first start)."""
        if not self._checked and self.config.transport == "stdio":
            self._version = await check_provenance(self.config, self.store, self.warn)
            self._checked = True
        target = self.config.client_target()
        sandbox = self.config.sandbox
        if sandbox is None or self.config.transport != "stdio":
            return target
        argv = await installed_command(
            target["command"], target["args"], self._version, self.packages, target["env"]
        )
        if argv is not None:  # installed out here, run in there (its folder read-only)
            target = {**target, "command": argv[0], "args": argv[1:]}
            sandbox = replace(sandbox, paths=(*sandbox.paths, str(self.packages)))
        self.release()
        target, self._scratch = sandboxed_target(target, sandbox)
        return target

    def release(self) -> None:
        """Remove the sandbox's scratch directory (a new one is made at each start)."""
        scratch, self._scratch = self._scratch, None
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
