"""What a user installs: a lean sdist (no tests/, bench/ or .ci/), the licence and changelog in it,
metadata with classifiers and URLs, and `python -m mcpkit`. The wheel in a clean venv outside the
repository is checked by `.ci/check_wheel.sh` (it needs the package index)."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from support import ROOT


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation", "-o", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (archive,) = out.glob("mcpkit-*.tar.gz")
    with tarfile.open(archive) as tar:
        return [name.partition("/")[2] for name in tar.getnames()]


def test_the_sdist_is_lean(sdist: list[str]) -> None:
    tops = {name.partition("/")[0] for name in sdist if name}
    print("sdist:", sorted(tops))
    assert not tops & {"tests", "bench", ".ci", "conformance", ".cache", ".venv"}
    assert {"src", "examples", "README.md", "LICENSE", "CHANGELOG.md", "pyproject.toml"} <= tops
    assert "src/mcpkit/__main__.py" in sdist and "src/mcpkit/py.typed" in sdist


def test_metadata(sdist: list[str]) -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert any(
        c.startswith("Programming Language :: Python :: 3.11") for c in project["classifiers"]
    )
    assert {"Homepage", "Documentation", "Changelog"} <= set(project["urls"])
    deps = " ".join(project["dependencies"])
    assert "httptools" in deps and "starlette" not in deps


def test_python_dash_m_mcpkit() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "--version"], capture_output=True, text=True, cwd=Path("/")
    )
    assert done.returncode == 0 and done.stdout.startswith("mcpkit ")


def test_no_tracked_path_holds_an_unexpanded_variable() -> None:
    # issue 26: a config value written `${VAR:-default}` once became a committed file name.
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=False
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    paths = listed.stdout.decode("utf-8", "replace").split("\0")
    assert [p for p in paths if "${" in p] == []
