"""Pinned npm packages for the interop tests, installed once into a repository-local cache
(`.cache/...`, which `make clean` removes) and reused.

Without npm, or offline, a test that needs them skips with one line saying what to do; where
its environment variable or `CI` is set (`.ci/run`), it fails instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support import cache_lock, scaled


def npm_install(cache: Path, specs: list[str], what: str, require: str) -> None:
    """`npm install SPECS` into `cache` unless done before (a stamp names the specs), one
    install at a time (pytest -n). `what` names the packages in the skip line; `require` is the
    environment variable that turns a skip into a failure."""
    stamp = cache / f".ready-{'-'.join(spec.rpartition('@')[2] for spec in specs)}"
    with cache_lock(cache):
        if not stamp.exists():
            _install(cache, specs, what, bool(os.environ.get(require) or os.environ.get("CI")))
            stamp.touch()


def _install(cache: Path, specs: list[str], what: str, required: bool) -> None:
    npm = shutil.which("npm")
    if npm is None:
        if required:
            raise RuntimeError(f"npm is required to install {what}")
        pytest.skip(f"needs npm (Node.js) to install {what}; apt-get install npm")
    try:
        subprocess.run(
            [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", *specs],
            check=True,
            timeout=scaled(900),
            capture_output=True,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        if required:
            raise
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        last = stderr.strip().splitlines()[-1] if stderr.strip() else str(exc)
        pytest.skip(f"cannot install {what} with npm ({last}); go online")
