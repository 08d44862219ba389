"""A package's public names from one list: its `__init__.pyi`.

    __getattr__, __dir__, __all__ = exports(__name__, __file__)

The stub's `from .module import Name as Name` lines are the package's public API, for type
checkers and at run time alike (the lazy-loading stubs of Scientific Python's SPEC 1, without
the dependency): each name's module is imported when the name is first used, so that
`import mcpkit` stays cheap and `import mcpkit.client.errors` loads only what it needs.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def read_stub(init_file: str) -> dict[str, tuple[str, str]]:
    """Public name → (module, name in it), from the `from X import A as A` lines of the stub
    next to `init_file` (parenthesised lists and comments allowed)."""
    with open(init_file[: -len(".py")] + ".pyi", encoding="utf-8") as f:
        lines = [line.split("#", 1)[0].rstrip() for line in f]
    where: dict[str, tuple[str, str]] = {}
    module = None
    for line in lines:
        text = line.strip()
        if text.startswith("from ") and " import " in text:
            module, _, text = text[5:].partition(" import ")
            module = module.strip()
            if module == "__future__":
                module = None
                continue
        elif module is None:
            continue
        for item in text.strip("()").split(","):
            name, _, alias = item.strip().partition(" as ")
            if name:
                where[(alias or name).strip()] = (module, name.strip())
        if not text.endswith("(") and not text.endswith(","):
            module = None
    return where


def exports(
    package: str, init_file: str
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """`__getattr__`, `__dir__` and `__all__` for the package `package` (see the module doc)."""
    where = read_stub(init_file)
    names = sorted(where)
    namespace = import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        found = where.get(name)
        if found is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attr = found
        value = getattr(import_module(module, package), attr)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__, names
