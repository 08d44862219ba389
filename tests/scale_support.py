"""Real parts for the scale-out tests: mcpkit instances (`tests/servers/scale_server.py`) to
stop and start again, nginx with `deploy/nginx/mcpkit.conf` in front of them, a hand-held
HTTP/1.1 connection. Redis is `processes.RedisProcess`."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import sys
from pathlib import Path

from processes import stop
from support import ROOT, free_port, wait_port

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
CLUSTER_SERVER = ROOT / "tests/servers/scale_server.py"


class Instance:
    """One `tests/servers/scale_server.py` process: `start()`, then SIGTERM / SIGKILL it and
    `start()` it again on the same port."""

    def __init__(self, name: str, redis_url: str, env: dict[str, str], log: Path) -> None:
        self.name = name
        self.redis_url = redis_url
        self.env = env
        self.log = log
        self.port = free_port()
        self.proc: asyncio.subprocess.Process | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        """Start it; again on the same port after a stop (a proxy knows it by its port)."""
        first = self.proc is None
        for _attempt in range(3 if first else 1):
            stderr = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                self.proc = await asyncio.create_subprocess_exec(
                    sys.executable,
                    str(CLUSTER_SERVER),
                    str(self.port),
                    self.redis_url,
                    self.name,
                    env=self.env,
                    stderr=stderr,
                )
            finally:
                os.close(stderr)
            try:
                await wait_port(self.port, self.proc)
                return
            except RuntimeError:  # a port picked free was taken before the server bound it
                await stop(self.proc, signal.SIGKILL)
                self.port = free_port()
        raise RuntimeError(f"instance {self.name} did not start on port {self.port}")

    async def stop(self, sig: int = signal.SIGTERM) -> int:
        assert self.proc is not None
        return await stop(self.proc, sig)


class Connection:
    """One HTTP/1.1 connection held open by hand (to see what a server does with a
    keep-alive connection): `post()` a JSON body or `get()` a path, read the whole answer."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int) -> Connection:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer)

    async def post(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        return await self.request("POST", "/mcp", body, headers)

    async def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        return await self.request("GET", path, b"", {})

    async def request(
        self, method: str, path: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        head = [f"{method} {path} HTTP/1.1", "host: 127.0.0.1", f"content-length: {len(body)}"]
        head += [f"{k}: {v}" for k, v in headers.items() if k != "host"]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        await self.writer.drain()
        return await self.response()

    async def response(self) -> tuple[int, dict[str, str], bytes]:
        """The next whole answer on the connection (its status, fields and body)."""
        status_line = await self.reader.readline()
        status = int(status_line.split()[1])
        fields: dict[str, str] = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            fields[name.strip().lower()] = value.strip()
        data = await self.reader.readexactly(int(fields.get("content-length", "0")))
        return status, fields, data

    async def closed_by_peer(self) -> bool:
        """Whether the server closed the connection (EOF) rather than keep it."""
        return await self.reader.read(1) == b""

    def close(self) -> None:
        self.writer.close()


NGINX_RECIPE = ROOT / "deploy/nginx/mcpkit.conf"


def nginx_conf(tmp: Path, listen: int, instances: dict[str, int]) -> Path:
    """`deploy/nginx/mcpkit.conf` as it stands, with this machine's addresses for the
    instances (by name: a, b, c) and the listen port, inside a complete nginx.conf whose pid,
    logs and temporary files stay in `tmp`."""
    text = NGINX_RECIPE.read_text()
    for name, port in instances.items():
        text = text.replace(f"mcpkit-{name}:8000", f"127.0.0.1:{port}")
    text = text.replace("listen 80;", f"listen 127.0.0.1:{listen};")
    assert not re.search(r"mcpkit-\w+:\d+|listen 80;", text), "an address was left unswapped"
    (tmp / "mcpkit.conf").write_text(text)
    temp = " ".join(
        f"{kind}_temp_path {tmp}/{kind};" for kind in ("proxy", "fastcgi", "uwsgi", "scgi")
    )
    main = tmp / "nginx.conf"
    main.write_text(
        ("user root;\n" if os.geteuid() == 0 else "")
        + f"worker_processes 1;\ndaemon off;\npid {tmp}/nginx.pid;\nerror_log {tmp}/error.log warn;\n"
        + "events { worker_connections 4096; }\n"
        + f"http {{\n  access_log off;\n  client_body_temp_path {tmp}/body;\n  {temp}\n"
        + f"  include {tmp}/mcpkit.conf;\n}}\n"
    )
    return main


class Nginx:
    """nginx (the Debian package) on a free port, with `nginx_conf`'s configuration."""

    def __init__(self, tmp: Path, instances: dict[str, int]) -> None:
        assert NGINX is not None, "nginx is required"
        self.tmp = tmp
        self.port = free_port()
        self.conf = nginx_conf(tmp, self.port, instances)
        self.proc: asyncio.subprocess.Process | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        assert NGINX is not None
        self.proc = await asyncio.create_subprocess_exec(
            NGINX, "-p", str(self.tmp), "-c", str(self.conf), stderr=asyncio.subprocess.DEVNULL
        )
        await wait_port(self.port, self.proc)

    async def close(self) -> None:
        if self.proc is not None:
            await stop(self.proc, signal.SIGQUIT)  # nginx's graceful shutdown

    def errors(self) -> str:
        log = self.tmp / "error.log"
        return log.read_text() if log.exists() else ""
