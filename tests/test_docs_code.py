"""Every ```python block of README.md and docs/*.md is run or checked here.

The convention (also in CONTRIBUTING.md). A ```python block is **run** as it stands (its own
namespace, the repository as working directory; it must finish quickly and bind no fixed port).
An HTML comment on the line before the block changes that:

    <!-- test: excerpt examples/FILE.py -->   the block is a verbatim part of that example file
                                              (the example itself is run by tests/test_examples.py)
    <!-- test: with examples/FILE.py -->      run the block in the namespace of that file, freshly
                                              imported (for snippets that use its `server`)
    <!-- test: typecheck -->                  mypy checks the block, nothing runs it (add
                                              `with examples/FILE.py` to prepend that file)
    <!-- test: pytest -->                     the block is a test file: pytest runs it (from the
                                              repository root, examples/ importable, with
                                              pytest-asyncio's asyncio_mode=auto) and it passes
    <!-- test: skip REASON -->                neither: allowed only for blocks that need a real
                                              model API key or network; listed by
                                              test_skipped_blocks_are_listed

Blocks in other languages are not run, but ```json blocks must parse (an `mcpServers` one must
be a valid host configuration) and every `mcpkit COMMAND` in a ```bash block must name a real
command.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from support import ROOT, scaled

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
FENCE = re.compile(r"^```(\S*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*test:\s*(\w+)\s*(.*?)\s*-->\s*$")
#: Every skipped block, by page and line, with its reason: a new skip must be added here too.
SKIPPED: dict[str, str] = {}


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    code: str
    mode: str  # run | excerpt | with | typecheck | skip
    argument: str
    language: str = "python"

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        index = 0
        while index < len(lines):
            fence = FENCE.match(lines[index])
            if fence is None:
                index += 1
                continue
            end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
            code = "\n".join(lines[index + 1 : end]) + "\n"
            name = str(page.relative_to(ROOT))
            if fence.group(1) in ("python", "py"):
                previous = index - 1
                while previous >= 0 and not lines[previous].strip():
                    previous -= 1
                directive = DIRECTIVE.match(lines[previous]) if previous >= 0 else None
                mode, argument = directive.groups() if directive else ("run", "")
                found.append(Block(name, index + 1, code, mode, argument))
            elif fence.group(1) in ("json", "bash"):
                found.append(Block(name, index + 1, code, "other", "", fence.group(1)))
            index = end + 1
    return found


BLOCKS = blocks()


def of(mode: str) -> list[Any]:
    return [pytest.param(b, id=b.id) for b in BLOCKS if b.mode == mode]


def test_every_directive_is_known() -> None:
    assert BLOCKS, "no python blocks found"
    known = ("run", "excerpt", "with", "typecheck", "pytest", "skip", "other")
    unknown = [b.id for b in BLOCKS if b.mode not in known]
    assert not unknown, f"unknown <!-- test: ... --> directive at {unknown}"


def test_skipped_blocks_are_listed() -> None:
    skipped = {b.id: b.argument for b in BLOCKS if b.mode == "skip"}
    print("skipped blocks:", skipped or "none")
    assert all(skipped.values()), "a skipped block needs its reason: <!-- test: skip REASON -->"
    assert skipped == SKIPPED, "list every skipped block (and only those) in SKIPPED"


@pytest.mark.parametrize(
    "block", [pytest.param(b, id=b.id) for b in BLOCKS if b.language == "json"]
)
def test_json_blocks_parse(block: Block) -> None:
    import json

    from mcpkit.host import parse_config

    data = json.loads(block.code)
    if "mcpServers" in data:
        parse_config(data, source=block.id, env={"RETURNS_TOKEN": "t"})


@pytest.mark.parametrize(
    "block", [pytest.param(b, id=b.id) for b in BLOCKS if b.language == "bash"]
)
def test_shell_blocks_use_real_commands(block: Block) -> None:
    from typer.main import get_command

    from mcpkit.cli.main import app

    commands = set(get_command(app).commands)  # type: ignore[attr-defined]
    used = re.findall(r"^\s*mcpkit (\S+)", block.code, flags=re.MULTILINE)
    assert set(used) <= commands, f"unknown mcpkit commands {set(used) - commands} in {block.id}"


@pytest.mark.parametrize("block", of("excerpt"))
def test_excerpts_match_their_example_file(block: Block) -> None:
    path = ROOT / block.argument
    assert block.argument.startswith("examples/") and path.is_file(), block.argument
    source = "\n".join(line.rstrip() for line in path.read_text().splitlines())
    excerpt = "\n".join(line.rstrip() for line in block.code.strip("\n").splitlines())
    assert excerpt in source, f"{block.id} is not a verbatim part of {block.argument}"


def _namespace(block: Block) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "docs_block"}
    if block.mode == "with":
        path = ROOT / block.argument
        namespace["__file__"] = str(path)
        sys.path.insert(0, str(path.parent))
        try:
            exec(compile(path.read_text(), str(path), "exec"), namespace)
        finally:
            sys.path.remove(str(path.parent))
    return namespace


@pytest.mark.parametrize("block", of("run") + of("with"))
def test_blocks_run(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    namespace = _namespace(block)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block.code, block.id, "exec"), namespace)


@cache
def _mypy(tmp: Path) -> dict[str, str]:
    """One mypy run over every typecheck block: file name → its error lines."""
    files = {}
    for n, block in enumerate(b for b in BLOCKS if b.mode == "typecheck"):
        prelude, _, target = block.argument.partition("with ")
        del prelude
        head = (ROOT / target.strip()).read_text() + "\n" if target.strip() else ""
        path = tmp / f"block_{n}.py"
        path.write_text(head + block.code)
        files[block.id] = path
    if not files:
        return {}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir",
         str(ROOT / ".mypy_cache/docs"), *map(str, files.values())],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "MYPYPATH": str(ROOT / "src")},
    )  # fmt: skip
    return {
        block_id: "\n".join(line for line in done.stdout.splitlines() if path.name in line)
        for block_id, path in files.items()
    }


@pytest.mark.parametrize("block", of("typecheck"))
def test_blocks_typecheck(block: Block, tmp_path_factory: pytest.TempPathFactory) -> None:
    errors = _mypy(tmp_path_factory.getbasetemp())
    assert not errors[block.id], errors[block.id]


#: The configuration a user's suite would have for these tests (docs/testing.md says so).
PYTEST_INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"


@pytest.mark.parametrize("block", of("pytest"))
def test_pytest_blocks_pass(block: Block, tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text(PYTEST_INI)
    test_file = tmp_path / "test_block.py"
    test_file.write_text(block.code)
    path = [str(ROOT / "examples"), os.environ.get("PYTHONPATH", "")]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c",
         str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), str(test_file)],
        capture_output=True, text=True, cwd=ROOT, timeout=scaled(180),
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)},
    )  # fmt: skip
    report = f"{block.id}:\n{done.stdout[-4000:]}\n{done.stderr[-2000:]}"
    assert done.returncode == 0 and " passed" in done.stdout, report
    assert "skipped" not in done.stdout and "xfail" not in done.stdout, report
