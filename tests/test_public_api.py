"""The public API is what the docs say (as httpx checks its exports): each package's export
list (`__init__.pyi`, read by `mcpkit._lazy`) is the table in docs/api.md, every name in it
resolves to mcpkit's own object, and the docs, README and examples import only what exists
(from a package: only its exported names)."""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT

SRC = ROOT / "src"
#: The packages with an export list: every `__init__.pyi` under src/mcpkit.
PACKAGES = sorted(
    ".".join(p.parent.relative_to(SRC).parts) for p in (SRC / "mcpkit").rglob("__init__.pyi")
)
ROW = re.compile(r"^\| `(mcpkit[\w.]*)` \| (.*) \|$", re.M)
IMPORT = re.compile(r"^\s*from (mcpkit[\w.]*) import (\([^)]*\)|[^\n#]+)", re.M)


def documented() -> dict[str, list[str]]:
    """Package → names, from the "Public names" table of docs/api.md."""
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    return {pkg: re.findall(r"`([\w]+)`", names) for pkg, names in ROW.findall(text)}


def test_every_export_list_is_in_the_docs() -> None:
    assert sorted(documented()) == PACKAGES


@pytest.mark.parametrize("package", PACKAGES)
def test_the_docs_list_exactly_the_exports(package: str) -> None:
    module = importlib.import_module(package)
    assert documented()[package] == module.__all__
    assert set(module.__all__) <= set(dir(module))


@pytest.mark.parametrize("package", PACKAGES)
def test_every_export_resolves_to_mcpkit_code(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        value = getattr(module, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith("mcpkit."), (name, value.__module__)
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        module.Nope  # noqa: B018


def doc_imports() -> list[tuple[str, str, list[str]]]:
    """(file, module, names) of every `from mcpkit... import ...` in the README, the docs and
    the examples."""
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "examples").rglob("*.py")]
    found = []
    for path in files:
        for module, names in IMPORT.findall(path.read_text(encoding="utf-8")):
            listed = [n.split(" as ")[0].strip() for n in names.strip("()").split(",")]
            found.append((str(path.relative_to(ROOT)), module, [n for n in listed if n]))
    return found


def test_docs_and_examples_import_only_public_names() -> None:
    imports = doc_imports()
    assert len(imports) > 50
    wrong = []
    for where, module_name, names in imports:
        if any(part.startswith("_") for part in module_name.split(".")):
            wrong.append(f"{where}: private module {module_name}")
            continue
        module = importlib.import_module(module_name)
        exported = set(getattr(module, "__all__", ())) if module_name in PACKAGES else None
        for name in names:
            if exported is not None and name not in exported:
                wrong.append(f"{where}: {name} is not exported by {module_name}")
            elif not hasattr(module, name):
                wrong.append(f"{where}: {module_name} has no {name}")
    assert not wrong, "\n".join(wrong)


def test_import_client_errors_loads_only_what_it_needs() -> None:
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import mcpkit.client.errors\n"
        "print(' '.join(sorted(m for m in set(sys.modules) - before if 'mcpkit' in m)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.split()
    assert out == ["mcpkit", "mcpkit._lazy", "mcpkit.client", "mcpkit.client.errors"]


def test_the_export_lists_are_the_stubs() -> None:
    """One list per package: `__all__` is read from the stub, not written twice."""
    for package in PACKAGES:
        init = Path(importlib.import_module(package).__file__ or "")
        assert "__all__ = [" not in init.read_text(encoding="utf-8"), package
