"""The shape of `src/mcpkit`, read from its source: no import cycle between the packages (or the
modules of one package), counting every import that runs, and no function over 60 lines or
module over 400 lines but the ones named below, each with its reason, a list that can only
shrink.

import-linter (`.importlinter`) already reads imports inside functions; what it cannot see is
a name the lazy `__getattr__` of a package loads (`mcpkit._lazy`: `from mcpkit.gateway import
proxy` imports `mcpkit.gateway.proxy`), or `importlib.import_module("mcpkit....")`. This walk
counts both. Imports under `if TYPE_CHECKING:` never run, and do not count (as there)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from mcpkit._lazy import read_stub
from support import ROOT

SRC = ROOT / "src"
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400

#: "path:qualified name" → (lines today, why it is still longer): an entry may not grow, and
#: must go once its function is short (the test says so).
LONG_FUNCTIONS: dict[str, tuple[int, str]] = {}
#: "path" → (lines today, why it is still longer).
LONG_MODULES: dict[str, tuple[int, str]] = {}


def module_files() -> dict[str, Path]:
    """Dotted module name → file, for every module and package of `src/mcpkit`."""
    found: dict[str, Path] = {}
    for path in sorted((SRC / "mcpkit").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = module_files()


def is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def run_time_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node` that can run: all but the bodies of `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(node):
        yield child
        if isinstance(child, ast.If) and is_type_checking(child):
            for other in child.orelse:
                yield other
                yield from run_time_nodes(other)
        else:
            yield from run_time_nodes(child)


def known(name: str) -> str | None:
    """The module of ours that `name` is, or lies in (`mcpkit.x.Name` → `mcpkit.x`)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def lazy_exports(package: str) -> dict[str, str]:
    """Name → module for a package whose `__getattr__` loads names from its `__init__.pyi`."""
    init = MODULES[package]
    if init.name != "__init__.py" or not init.with_suffix(".pyi").exists():
        return {}
    if "exports(__name__, __file__)" not in init.read_text(encoding="utf-8"):
        return {}
    return {
        name: absolute(package, where, is_package=True)
        for name, (where, _) in read_stub(str(init)).items()
    }


def absolute(module: str, target: str, *, is_package: bool, level: int = 0) -> str:
    """`target` (relative by its leading dots or `level`) as an absolute module name."""
    dots = level or len(target) - len(target.lstrip("."))
    if not dots:
        return target
    base = module.split(".")
    if not is_package:
        base.pop()
    base = base[: len(base) - (dots - 1)]
    rest = target.lstrip(".")
    return ".".join([*base, rest] if rest else base)


def imported(module: str, node: ast.AST) -> Iterator[str]:
    """The modules of ours that one node (an import, or `import_module("mcpkit...")`) loads."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield from filter(None, [known(alias.name)])
    elif isinstance(node, ast.ImportFrom):
        is_package = MODULES[module].name == "__init__.py"
        base = absolute(module, node.module or "", is_package=is_package, level=node.level)
        exported = lazy_exports(base) if base in MODULES else {}
        for alias in node.names:
            name = f"{base}.{alias.name}"
            yield from filter(None, [known(exported.get(alias.name, name))])
    elif isinstance(node, ast.Call) and node.args:
        func, first = node.func, node.args[0]
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        name = first.value if isinstance(first, ast.Constant) else None
        if called == "import_module" and isinstance(name, str) and name.startswith("mcpkit"):
            yield from filter(None, [known(name)])


def imports() -> dict[tuple[str, str], str]:
    """(importer, imported) → where (`path:line`), for every import of ours that can run."""
    found: dict[tuple[str, str], str] = {}
    for module, path in MODULES.items():
        for target in lazy_exports(module).values():  # the package's __getattr__ loads these
            found.setdefault((module, known(target) or target), f"{path.relative_to(ROOT)}i")
        for node in run_time_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            for target in imported(module, node):
                if target != module:
                    where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
                    found.setdefault((module, target), where)
    return found


def sibling_edges() -> dict[str, dict[tuple[str, str], str]]:
    """Package → {(child, child): an import that ties them}: the import of `a` by `b` ties
    the two children of their nearest common package that hold them (import-linter's
    `acyclic_siblings`, every package at once). A package's own `__init__` holds no child."""
    edges: dict[str, dict[tuple[str, str], str]] = {}
    for (a, b), where in imports().items():
        pa, pb = a.split("."), b.split(".")
        common = 0
        while common < min(len(pa), len(pb)) and pa[common] == pb[common]:
            common += 1
        if common in (len(pa), len(pb)):
            continue  # a package and what it holds
        parent = ".".join(pa[:common])
        pair = (".".join(pa[: common + 1]), ".".join(pb[: common + 1]))
        edges.setdefault(parent, {}).setdefault(pair, f"{where} ({a} -> {b})")
    return edges


def cycles(edges: dict[tuple[str, str], str]) -> list[list[str]]:
    """The strongly connected groups of more than one node (Tarjan's algorithm)."""
    graph: dict[str, list[str]] = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
        graph.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while (top := stack.pop()) != node:
                group.append(top)
            group.append(node)
            if len(group) > 1:
                groups.append(sorted(group))

    for node in graph:
        if node not in index:
            visit(node)
    return groups


def test_no_package_or_module_cycle_counting_every_import_that_runs() -> None:
    found = []
    for parent, edges in sorted(sibling_edges().items()):
        for group in cycles(edges):
            ties = [f"  {w}" for (a, b), w in sorted(edges.items()) if a in group and b in group]
            found.append(f"in {parent}: {' <-> '.join(group)}, through\n" + "\n".join(ties))
    assert not found, "import cycles:\n" + "\n".join(found)


def test_the_walk_sees_lazy_and_function_level_imports() -> None:
    """The walk is not blind where import-linter is: a lazy export of a package, an import
    inside a function, `import_module` with our name, and `if TYPE_CHECKING:` left out."""
    found = imports()
    assert ("mcpkit.gateway", "mcpkit.gateway.proxy") in found  # the package's __getattr__
    assert ("mcpkit.server.registrations", "mcpkit.server.mount") in found  # inside `mount`
    assert ("mcpkit.cli.loader", "mcpkit.server") in found  # import_module("mcpkit.server")
    assert ("mcpkit.server.server", "mcpkit.server.transports.http") in found  # in http_app
    assert ("mcpkit.server.mount", "mcpkit.server.server") not in found  # TYPE_CHECKING only
    assert not any(
        a.startswith("mcpkit.server") and b.startswith("mcpkit.gateway") for a, b in found
    )


def functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, int]]:
    """(qualified name, lines from `def` to its end) of every function, nested ones too."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = prefix + node.name
            yield name, (node.end_lineno or node.lineno) - node.lineno + 1
            yield from functions(node, name + ".")
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, prefix + node.name + ".")
        else:
            yield from functions(node, prefix)


def over_limits() -> tuple[dict[str, int], dict[str, int]]:
    """(functions over 60 lines, modules over 400 lines) of `src/`, keyed as the lists are."""
    long_functions: dict[str, int] = {}
    long_modules: dict[str, int] = {}
    for path in MODULES.values():
        text = path.read_text(encoding="utf-8")
        where = str(path.relative_to(ROOT))
        if (lines := len(text.splitlines())) > MAX_MODULE_LINES:
            long_modules[where] = lines
        for name, length in functions(ast.parse(text)):
            if length > MAX_FUNCTION_LINES:
                long_functions[f"{where}:{name}"] = length
    return long_functions, long_modules


def ratchet(kind: str, found: dict[str, int], allowed: dict[str, tuple[int, str]]) -> list[str]:
    """What breaks the list: a new long one, a listed one that grew, a listed one now short."""
    wrong = [f"{k}: {n} lines; split it (new {kind})" for k, n in found.items() if k not in allowed]
    for key, (lines, _) in allowed.items():
        if key not in found:
            wrong.append(f"{key}: now within the limit; take it off the list in {__name__}")
        elif found[key] > lines:
            wrong.append(f"{key}: grew from {lines} to {found[key]} lines; split it")
    return wrong


def test_no_function_over_60_lines_or_module_over_400_but_the_listed_ones() -> None:
    long_functions, long_modules = over_limits()
    wrong = ratchet("function", long_functions, LONG_FUNCTIONS)
    wrong += ratchet("module", long_modules, LONG_MODULES)
    assert not wrong, "\n".join(wrong)
