"""An npm registry stand-in on loopback (aiohttp): serves one package's document and real
tarballs, so `npm view` and `npx` run offline against it (`npm_config_registry`). Each
version's package is a `bin` script that starts a Python MCP server from tests/servers/."""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import io
import json
import sys
import tarfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

__all__ = ["FakeRegistry", "fake_registry"]


def _tarball(name: str, version: str, server: str) -> bytes:
    """`package/package.json` and `package/server.sh` (the bin: runs `server` on this Python)."""
    manifest = {"name": name, "version": version, "bin": {name: "server.sh"}}
    script = f"#!/bin/sh\nexec '{sys.executable}' '{server}' \"$@\"\n"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path, text, mode in [
            ("package/package.json", json.dumps(manifest), 0o644),
            ("package/server.sh", script, 0o755),
        ]:
            data = text.encode()
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(buffer.getvalue(), mtime=0)  # the same bytes each time (integrity)


@dataclass
class FakeRegistry:
    """One package; `latest` is what `npm view NAME version` answers (set it to publish)."""

    name: str
    server: str
    versions: list[str]
    url: str = ""
    latest: str = ""
    #: The paths requested, in order (a tarball fetched means npx installed the package).
    requests: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.latest = self.latest or self.versions[-1]

    def env(self, cache: Path) -> dict[str, str]:
        """An entry's `env` for npm against this registry: a cache of its own, no retries."""
        return {
            "npm_config_registry": self.url,
            "npm_config_cache": str(cache),
            "npm_config_fetch_retries": "0",
            "npm_config_update_notifier": "false",
        }

    def publish(self, version: str) -> None:
        self.versions.append(version)
        self.latest = version

    def _document(self) -> dict[str, object]:
        versions = {}
        for version in self.versions:
            data = _tarball(self.name, version, self.server)
            digest = base64.b64encode(hashlib.sha512(data).digest()).decode()
            versions[version] = {
                "name": self.name,
                "version": version,
                "bin": {self.name: "server.sh"},
                "dist": {
                    "tarball": f"{self.url}{self.name}/-/{self.name}-{version}.tgz",
                    "integrity": f"sha512-{digest}",
                    "shasum": hashlib.sha1(data).hexdigest(),
                },
            }
        return {"name": self.name, "dist-tags": {"latest": self.latest}, "versions": versions}

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(request.path)
        if request.path == f"/{self.name}":
            return web.json_response(self._document())
        prefix = f"/{self.name}/-/{self.name}-"
        if request.path.startswith(prefix) and request.path.endswith(".tgz"):
            version = request.path[len(prefix) : -len(".tgz")]
            if version in self.versions:
                return web.Response(body=_tarball(self.name, version, self.server))
        return web.json_response({"error": "not found"}, status=404)


@contextlib.asynccontextmanager
async def fake_registry(name: str, server: str, *versions: str) -> AsyncIterator[FakeRegistry]:
    registry = FakeRegistry(name, server, list(versions))
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", registry.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    registry.url = f"http://127.0.0.1:{port}/"
    try:
        yield registry
    finally:
        await runner.cleanup()
