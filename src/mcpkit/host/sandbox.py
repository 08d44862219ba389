"""Sandboxed stdio servers: `"sandbox": {...}` in a server's entry runs it under bubblewrap
(`bwrap`) with a read-only view of the system's folders, a writable scratch directory (fresh
per start, removed after, mounted at `/tmp`), the chosen `paths` (read-only) and `writable`
paths, no network unless `"network": true`, and only the environment variables named in
`"env"` plus the entry's own `env`:

    "files": {"command": "python", "args": ["files_server.py"], "cwd": "/srv/files",
              "sandbox": {"paths": ["/srv/files"], "writable": ["/srv/files/out"],
                          "network": false, "env": ["PATH", "LANG"]}}

`bwrap_argv` builds the launcher's arguments and nothing else (no I/O: tested alone);
`sandboxed_target` wraps a client target with it. The environment is not written into the
arguments (any local user can read a process's arguments): the launcher is started with only
the passed variables, and the server inherits them.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "SYSTEM_PATHS",
    "Sandbox",
    "SandboxError",
    "bwrap_argv",
    "launcher",
    "sandboxed_target",
]

#: The system's folders a sandboxed server sees, read-only (those that exist).
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc")
#: Where the scratch directory is mounted inside the sandbox.
SCRATCH = "/tmp"


class SandboxError(RuntimeError):
    """The sandbox cannot be set up here (one line: what, why, what to do)."""


@dataclass(frozen=True, slots=True)
class Sandbox:
    """A server entry's `"sandbox"` object: what the server may see besides the system."""

    #: Whether it shares the host's network (else it has none, loopback included).
    network: bool = False
    paths: tuple[str, ...] = ()  # read-only
    writable: tuple[str, ...] = ()
    #: The names of the host's environment variables passed on.
    env: tuple[str, ...] = ()

    @classmethod
    def parse(cls, value: Any) -> Sandbox | None:
        """None for no `sandbox` (or `false`); `true` is the strictest one; raises ValueError
        naming the field that is wrong."""
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        if not isinstance(value, Mapping):
            raise ValueError('"sandbox" is an object ({"paths", "writable", "network", "env"})')
        unknown = sorted(set(value) - {"paths", "writable", "network", "env"})
        if unknown:
            raise ValueError(
                f'"sandbox" has unknown keys {unknown} (paths, writable, network, env)'
            )
        network = value.get("network", False)
        if not isinstance(network, bool):
            raise ValueError('"sandbox.network" must be true or false')
        paths, writable = _absolute(value, "paths"), _absolute(value, "writable")
        return cls(network, paths, writable, _strings(value, "env"))


def _strings(value: Mapping[str, Any], key: str) -> tuple[str, ...]:
    items = value.get(key) or []
    if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
        raise ValueError(f'"sandbox.{key}" must be a list of strings')
    return tuple(items)


def _absolute(value: Mapping[str, Any], key: str) -> tuple[str, ...]:
    items = _strings(value, key)
    relative = [p for p in items if not os.path.isabs(os.path.expanduser(p))]
    if relative:
        raise ValueError(f'"sandbox.{key}" needs absolute paths, not {relative}')
    return tuple(os.path.normpath(os.path.expanduser(p)) for p in items)


def bwrap_argv(
    sandbox: Sandbox,
    command: Sequence[str],
    *,
    scratch: str,
    cwd: str | None = None,
    system: Sequence[str] = SYSTEM_PATHS,
    bwrap: str = "bwrap",
) -> list[str]:
    """The whole command line: `bwrap` with its options, then `command`. `system`: the
    system folders that exist here (bound read-only); `cwd`, when given, is visible
    read-only (unless listed as writable) and the server starts there, else in the scratch."""
    argv = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc"]
    argv += ["--unshare-uts", "--unshare-cgroup-try"]
    if not sandbox.network:
        argv.append("--unshare-net")
    for path in system:
        argv += ["--ro-bind", path, path]
    argv += ["--dev", "/dev", "--proc", "/proc", "--bind", scratch, SCRATCH]
    readable = [*sandbox.paths]
    if cwd is not None and cwd not in sandbox.writable:
        readable.append(cwd)
    for path in readable:
        argv += ["--ro-bind", path, path]
    for path in sandbox.writable:
        argv += ["--bind", path, path]
    argv += ["--chdir", cwd or SCRATCH, "--", *command]
    return argv


def launcher() -> str:
    """The `bwrap` executable; SandboxError (one line) where it is missing or not Linux."""
    if not sys.platform.startswith("linux"):
        raise SandboxError(
            f'"sandbox" needs Linux (bubblewrap); this is {sys.platform}: '
            'remove "sandbox" from the entry or run the host on Linux'
        )
    found = shutil.which("bwrap")
    if found is None:
        raise SandboxError(
            'bubblewrap (bwrap) is not installed, so the "sandbox" entry cannot run: install it '
            "(Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
        )
    return found


def sandboxed_target(
    target: Mapping[str, Any],
    sandbox: Sandbox,
    environ: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], str]:
    """A stdio client target (`ServerConfig.client_target()`) run under bwrap, and the fresh
    scratch directory made for it (the caller removes it when the server stops). The launcher
    gets exactly the named variables of `environ` and the entry's own `env`."""
    bwrap = launcher()
    environ = os.environ if environ is None else environ
    env = {name: environ[name] for name in sandbox.env if name in environ}
    env.update(target.get("env") or {})
    command = [str(target["command"]), *(str(a) for a in target.get("args") or [])]
    found = shutil.which(command[0], path=env.get("PATH", environ.get("PATH")))
    command[0] = found or command[0]
    cwd = target.get("cwd")
    cwd = str(Path(cwd).resolve()) if cwd else None
    system = [p for p in SYSTEM_PATHS if os.path.exists(p)]
    scratch = tempfile.mkdtemp(prefix="mcpkit-sandbox-")
    argv = bwrap_argv(sandbox, command, scratch=scratch, cwd=cwd, system=system, bwrap=bwrap)
    wrapped = {**target, "command": argv[0], "args": argv[1:], "env": env, "inheritEnv": False}
    wrapped.pop("cwd", None)
    return wrapped, scratch
