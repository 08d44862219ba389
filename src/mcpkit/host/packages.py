"""A sandboxed `npx` server is installed outside the sandbox, where the network is, and run
inside it, where there is none (unless its entry allows it): `npm install` puts the package
in a folder of its own (`<state>/sandbox-packages/NAME@VERSION`, kept for the next start), the
sandbox sees that folder read-only, and the server runs as the package's `bin`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .provenance import locate, run_tool, split

__all__ = ["INSTALL_TIMEOUT_S", "installed_command"]

#: Seconds `npm install` gets (a first install downloads the package and its dependencies).
INSTALL_TIMEOUT_S = 300.0


async def installed_command(
    command: str,
    args: Sequence[str],
    version: str | None,
    root: Path,
    env: Mapping[str, str] | None = None,
) -> list[str] | None:
    """The argv that runs an `npx` entry's package from its own folder under `root`,
    installing it there first; None when the entry is not an npm package run."""
    found = locate(command, args)
    if found is None or found[0] != "npm":
        return None
    kind, index = found
    origin = split(kind, args[index])
    spec = f"{origin.package}@{version or origin.requested or 'latest'}"
    folder = root / spec.replace("/", "+")
    if not (folder / "node_modules" / origin.package / "package.json").exists():
        await _npm_install(spec, folder, env)
    rest = list(args[index + 1 :])
    named = args[index - 1] in ("-p", "--package") and rest and not rest[0].startswith("-")
    program = _bin(folder / "node_modules" / origin.package, rest.pop(0) if named else None)
    return [str(folder / "node_modules" / ".bin" / program), *rest]


async def _npm_install(spec: str, folder: Path, env: Mapping[str, str] | None) -> None:
    argv = ["npm", "install", "--prefix", str(folder), "--no-save", "--no-audit", "--no-fund"]
    what = f"cannot install {spec} for the sandbox (npm install"
    await run_tool([*argv, spec], env, INSTALL_TIMEOUT_S, what)


def _bin(package: Path, wanted: str | None) -> str:
    """The package's program, as npx picks it: the one asked for, its only one, or the one
    named like the package."""
    manifest: dict[str, Any] = json.loads((package / "package.json").read_text(encoding="utf-8"))
    name = str(manifest.get("name", package.name)).rpartition("/")[2]
    programs = manifest.get("bin")
    if isinstance(programs, str):
        return name
    names = [str(n) for n in programs] if isinstance(programs, dict) else []
    if wanted is not None and wanted in names:
        return wanted
    if len(names) == 1:
        return names[0]
    if name in names:
        return name
    raise RuntimeError(f"{manifest.get('name')} has no single program to run ({names})")
