"""`mcpkit run FILE[:OBJ]`: import a server file or module and find the server in it."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["DEFAULT_NAMES", "find_server", "load_module", "split_spec"]

DEFAULT_NAMES = ("server", "mcp", "app")


def split_spec(spec: str) -> tuple[str, str | None]:
    """`"app.py:srv"` → `("app.py", "srv")`; `"app.py"` → `("app.py", None)`.

    A Windows drive (`C:\\x.py`) is not mistaken for the separator.
    """
    path, sep, name = spec.rpartition(":")
    is_drive = len(path) == 1 and path.isalpha()
    if sep and path and not is_drive and all(p.isidentifier() for p in name.split(".")):
        return path, name
    return spec, None


def load_module(target: str) -> ModuleType:
    """Import a `.py` file (its folder goes first on sys.path) or a dotted module name."""
    path = Path(target)
    if target.endswith(".py") or path.is_file():
        if not path.is_file():
            raise FileNotFoundError(f"no such file: {target}")
        path = path.resolve()
        sys.path.insert(0, str(path.parent))  # let the server import its neighbours
        module_name = path.stem if path.stem.isidentifier() else "mcpkit_server"
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {target}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        return module
    if "" not in sys.path:
        sys.path.insert(0, "")
    return importlib.import_module(target)


def _server_class() -> type | None:
    """`mcpkit.server.Server`, imported lazily (and looked up dynamically)."""
    try:
        server_cls = importlib.import_module("mcpkit.server").Server
    except (ImportError, AttributeError):
        return None
    return server_cls if isinstance(server_cls, type) else None


def find_server(module: ModuleType, name: str | None = None) -> Any:
    """The object `name` (dotted attributes allowed) or the module's server.

    Without a name: `server`, `mcp` or `app` if it is a `mcpkit.server.Server`, else the
    first `Server` instance in the module. Raises LookupError when there is none.
    """
    if name is not None:
        obj: Any = module
        for part in name.split("."):
            if not hasattr(obj, part):
                raise LookupError(f"{module.__name__} has no attribute {name!r}")
            obj = getattr(obj, part)
        if not callable(getattr(obj, "run", None)):
            raise LookupError(f"{name!r} in {module.__name__} has no run() method")
        return obj
    server_cls = _server_class()
    namespace = vars(module)
    for candidate in DEFAULT_NAMES:
        obj = namespace.get(candidate)
        if obj is None:
            continue
        if server_cls is not None and isinstance(obj, server_cls):
            return obj
        if server_cls is None and callable(getattr(obj, "run", None)):
            return obj
    if server_cls is not None:
        for obj in namespace.values():
            if isinstance(obj, server_cls):
                return obj
    raise LookupError(
        f"no mcpkit Server found in {module.__name__}; name it with FILE:OBJECT "
        f"(looked for {', '.join(DEFAULT_NAMES)})"
    )
