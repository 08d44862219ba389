"""Provenance of packaged servers: an `npx`/`bunx`/`pnpm dlx`, `uvx`/`pipx run` or `docker
run` entry runs whatever its registry serves, so the host records the package and the version
that ran the first time it started the server (trust on first use, like the tool pins), and at
each later start warns, or refuses (`"provenance": "refuse"`), when that version has moved.

What would run is asked of the package's own client, with a short deadline: `npm view`
(which honours `npm_config_registry`), `pip index versions` (`PIP_INDEX_URL`), `docker image
inspect` (the local image's digest). An entry naming an exact version (`pkg@1.2.3`,
`pkg==1.2.3`, `image@sha256:…`) is pinned already: that version is what is recorded. The
records sit beside the tool pins, in `provenance.json`:

    {"version": 1, "servers": {"files": {"kind": "npm", "package": "@acme/files-mcp",
                                         "version": "1.4.2"}}}
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .paths import write_atomic

__all__ = [
    "Origin",
    "ProvenanceRefused",
    "ProvenanceStore",
    "origin_of",
    "pinned_args",
    "resolve",
]

#: Seconds a registry (or docker) gets to say what would run.
RESOLVE_TIMEOUT_S = 15.0
_SEMVER = re.compile(r"^v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
_PEP440 = re.compile(r"^\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?$")
#: Options of `npx`/`uvx`/`pipx run`/`docker run` that take a value (the next word).
_VALUED = {
    "npm": {"-p", "--package", "-c", "--call", "--registry", "--cache", "-w", "--workspace"},
    "pypi": {"--from", "--with", "-p", "--python", "--index-url", "-i", "--spec", "--pip-args"},
    "docker": {"-e", "--env", "-v", "--volume", "-p", "--publish", "--name", "--network", "-u"}
    | {"--user", "-w", "--workdir", "--entrypoint", "--mount", "--env-file", "-l", "--label"}
    | {"--platform", "-m", "--memory", "--cpus", "--add-host", "-h", "--hostname", "--pull"},
}

#: Options that name the package (the first argument is then the command it provides).
_NAMES_PACKAGE = {"npm": {"-p", "--package"}, "pypi": {"--from", "--spec"}, "docker": set()}


class ProvenanceRefused(RuntimeError):
    """A server's package moved and its entry says `"provenance": "refuse"`."""


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a server comes from: the registry (`npm`, `pypi`, `docker`), the package (an
    image without its tag), and the version written in the entry (None: the latest)."""

    kind: str
    package: str
    requested: str | None = None

    @property
    def exact(self) -> str | None:
        """The entry's version when it names one exactly (then nothing is resolved)."""
        wanted = self.requested
        if wanted is None:
            return None
        if self.kind == "docker":
            return wanted if wanted.startswith("sha256:") else None
        pattern = _SEMVER if self.kind == "npm" else _PEP440
        return wanted.lstrip("v=") if pattern.match(wanted.lstrip("=")) else None

    @property
    def spec(self) -> str:
        """The package with its version, as the package's client writes it."""
        if self.requested is None:
            return self.package
        joint = {"npm": "@", "pypi": "==", "docker": "@" if self.exact else ":"}[self.kind]
        if self.kind == "pypi" and not self.requested[:1].isdigit():
            joint = ""  # a range: `pkg>=1.2`
        return f"{self.package}{joint}{self.requested.lstrip('=')}"


def origin_of(command: str, args: Sequence[str]) -> Origin | None:
    """The package an entry runs, or None when it runs no registry's package."""
    found = locate(command, args)
    return None if found is None else split(found[0], args[found[1]])


def pinned_args(command: str, args: Sequence[str], version: str) -> list[str]:
    """`args` with the package naming `version` exactly (`pkg@1.2.3`, `pkg==1.2`, `uvx`'s
    `pkg@1.2`, `image@sha256:…`): what `mcpkit install` writes."""
    words, found = list(args), locate(command, args)
    if found is None:
        return words
    kind, index = found
    origin = split(kind, words[index])
    if kind == "pypi":
        extras = re.match(r"^[^\[=@<>!~ ]*(\[[^\]]*\])?", words[index])
        base = origin.package + (extras.group(1) or "" if extras else "")
        positional = Path(command).name == "uvx" and words[index - 1 : index] != ["--from"]
        words[index] = f"{base}{'@' if positional else '=='}{version}"
    else:
        words[index] = Origin(kind, origin.package, version).spec
    return words


def locate(command: str, args: Sequence[str]) -> tuple[str, int] | None:
    """The registry an entry's command uses and the index in `args` of its package word."""
    tool, skip = Path(command).name, 0
    if tool in ("npm", "pnpm") and list(args[:1]) in (["exec"], ["dlx"]):
        tool, skip = "npx", 1
    if tool in ("pipx", "docker"):
        if list(args[:1]) != ["run"]:
            return None
        skip = 1
    kind = {"npx": "npm", "bunx": "npm", "uvx": "pypi", "pipx": "pypi", "docker": "docker"}
    if tool not in kind:
        return None
    index = _package_index(list(args[skip:]), kind[tool])
    return None if index is None else (kind[tool], skip + index)


def _package_index(words: list[str], kind: str) -> int | None:
    """The package word: `--package`/`--from`/`--spec` when given, else the first argument."""
    valued, index = _VALUED[kind], 0
    while index < len(words):
        word = words[index]
        if word == "--" or word in _NAMES_PACKAGE[kind]:
            return index + 1 if index + 1 < len(words) else None
        if word.startswith("-"):
            index += 2 if word in valued else 1
            continue
        return index
    return None


def split(kind: str, word: str) -> Origin:
    if kind == "npm":
        sign = word.rfind("@")
        if sign > 0:  # not the `@` of a scope
            return Origin(kind, word[:sign], word[sign + 1 :] or None)
        return Origin(kind, word)
    if kind == "pypi":
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(?:@|==)?\s*(.*)$", word)
        name, rest = (match.group(1), match.group(3)) if match else (word, "")
        return Origin(kind, name, rest if rest not in ("", "latest") else None)
    image, at, digest = word.partition("@")
    if at:
        return Origin(kind, image, digest)
    slash = image.rfind("/")
    colon = image.rfind(":")
    if colon > slash:
        return Origin(kind, image[:colon], image[colon + 1 :])
    return Origin(kind, image)


async def resolve(
    origin: Origin, env: Mapping[str, str] | None = None, timeout: float = RESOLVE_TIMEOUT_S
) -> str:
    """The version that would run now; RuntimeError (one line) when it cannot be told."""
    exact = origin.exact
    if exact is not None:
        return exact
    if origin.kind == "npm":
        wanted = f"{origin.package}@{origin.requested or 'latest'}"
        argv = ["npm", "view", "--prefer-online", wanted, "version", "--json"]
        out = await _run(argv, env, timeout, origin)
        found = json.loads(out) if out.strip() else None
        found = found[-1] if isinstance(found, list) and found else found
    elif origin.kind == "pypi":
        argv = [sys.executable, "-m", "pip", "index", "versions", origin.package]
        out = await _run([*argv, "--disable-pip-version-check"], env, timeout, origin)
        found = _newest(out, origin.requested)
    else:
        argv = ["docker", "image", "inspect", "--format", "{{json .RepoDigests}}", origin.spec]
        digests = json.loads(await _run(argv, env, timeout, origin) or "null") or []
        found = str(digests[0]).partition("@")[2] if digests else None
    if not isinstance(found, str) or not found:
        raise RuntimeError(f"{origin.spec}: the registry named no version for it")
    return found


def _newest(listing: str, wanted: str | None) -> str | None:
    """The newest of `pip index versions`'s list that the entry's range allows."""
    match = re.search(r"^Available versions: (.+)$", listing, re.MULTILINE)
    versions = [v.strip() for v in match.group(1).split(",")] if match else []
    if wanted is not None:
        try:
            from packaging.specifiers import SpecifierSet
        except ImportError:  # pragma: no cover - pip's environments have it
            return versions[0] if versions else None
        try:
            versions = list(SpecifierSet(wanted).filter(versions))
        except ValueError:
            raise RuntimeError(f"{wanted!r} is not a version range pip understands") from None
    return versions[0] if versions else None


async def _run(
    argv: list[str], env: Mapping[str, str] | None, timeout: float, origin: Origin
) -> str:
    where = {"npm": "npm view", "pypi": "pip index versions", "docker": "docker image inspect"}
    what = f"cannot tell which version of {origin.spec} would run ({where[origin.kind]}"
    return await run_tool(argv, env, timeout, what)


async def run_tool(
    argv: list[str], env: Mapping[str, str] | None, timeout: float, what: str
) -> str:
    """A package tool's standard output; RuntimeError `what: why)` (one line) when it cannot
    start, takes over `timeout` seconds or fails (its last line of stderr)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
    except OSError as exc:
        raise RuntimeError(f"{what}: {exc.strerror}; offline, or the tool is missing)") from None
    try:
        async with asyncio.timeout(timeout):
            out, err = await proc.communicate()
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise RuntimeError(f"{what} took over {timeout:g} s: offline?)") from None
    if proc.returncode != 0:
        last = (err.decode(errors="replace").strip().splitlines() or ["failed"])[-1]
        raise RuntimeError(f"{what}: {last})")
    return out.decode(errors="replace")


class ProvenanceStore:
    """The recorded origins, per server, in a JSON file (None: kept in memory only)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path).expanduser() if path is not None else None
        self._memory: dict[str, dict[str, Any]] = {}

    @classmethod
    def beside(cls, pins: Path | None) -> ProvenanceStore:
        """The store next to a tool pin file (`provenance.json` in its folder)."""
        return cls(pins.with_name("provenance.json") if pins is not None else None)

    def _read(self) -> dict[str, dict[str, Any]]:
        if self.path is None:
            return self._memory
        try:
            servers = json.loads(self.path.read_text(encoding="utf-8")).get("servers")
        except (OSError, ValueError, AttributeError):
            return {}
        return servers if isinstance(servers, dict) else {}

    def records(self) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self._read().items() if isinstance(v, dict)}

    def get(self, server: str) -> dict[str, Any] | None:
        record = self._read().get(server)
        return record if isinstance(record, dict) else None

    def record(self, server: str, origin: Origin, version: str) -> None:
        servers = self._read()
        servers[server] = {"kind": origin.kind, "package": origin.package, "version": version}
        self._write(servers)

    def forget(self, server: str) -> bool:
        """Drop a server's record (its next start records what runs then)."""
        servers = self._read()
        if servers.pop(server, None) is None:
            return False
        self._write(servers)
        return True

    def _write(self, servers: dict[str, dict[str, Any]]) -> None:
        if self.path is None:
            self._memory = servers
            return
        document = {"version": 1, "servers": servers}
        write_atomic(self.path, (json.dumps(document, indent=2) + "\n").encode())
