"""Official SDK releases for the interop tests, each in its own venv under the repository's
`.cache/interop/` (made once with pip, reused; `make test` keeps it, `make clean` removes it).

Offline, a test that needs one skips with one line saying what to do; in CI (`CI` set) it fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT, cache_lock, scaled

CACHE = ROOT / ".cache/interop"


def sdk_python(version: str, *extra: str, override_env: str) -> Path:
    """The python of a venv holding `mcp==version` (and `extra` packages).

    `override_env` names an environment variable that may point at such a python instead."""
    override = os.environ.get(override_env)
    if override:
        return Path(override)
    venv = CACHE / f"mcp-{version}"
    with cache_lock(CACHE):  # one install at a time (pytest -n)
        if not (venv / ".ready").exists():
            _install(venv, version, *extra, override_env=override_env)
    return venv / "bin/python"


def _install(venv: Path, version: str, *extra: str, override_env: str) -> None:
    python = venv / "bin/python"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"mcp=={version}", *extra],
            check=True,
            timeout=scaled(900),
            capture_output=True,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        if os.environ.get("CI"):
            raise
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        last = stderr.strip().splitlines()[-1] if stderr.strip() else str(exc)
        pytest.skip(
            f"needs mcp=={version} from PyPI in {venv.relative_to(ROOT)} "
            f"(pip failed: {last}); go online or set {override_env}"
        )
    (venv / ".ready").touch()
