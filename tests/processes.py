"""Real processes for tests: HTTP servers on free ports and `redis-server` in a temporary
directory, each ready when its port accepts connections, each ended by the test that made it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from support import free_port, scaled, wait_port

REDIS = shutil.which("redis-server")


async def stop(
    proc: asyncio.subprocess.Process, sig: int = signal.SIGTERM, seconds: float = 10
) -> int:
    """Signal `proc` (SIGTERM unless told) and wait for it, SIGKILL after `seconds`; its exit
    status."""
    if proc.returncode is None:
        proc.send_signal(sig)
        try:
            await asyncio.wait_for(proc.wait(), scaled(seconds))
        except TimeoutError:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode


@contextlib.asynccontextmanager
async def http_server(script: Path, *args: str, log: Path | None = None) -> AsyncIterator[str]:
    """`python script PORT *args` serving HTTP; yields its base URL (`http://127.0.0.1:PORT`).
    `log`: where its stderr goes (appended), else nowhere."""
    async with http_process(script, *args, log=log) as (url, _):
        yield url


@contextlib.asynccontextmanager
async def http_process(
    script: Path, *args: str, log: Path | None = None
) -> AsyncIterator[tuple[str, asyncio.subprocess.Process]]:
    """`http_server`, with its process (to kill it midway)."""
    for _attempt in range(3):  # a port picked free can be taken before the server binds it
        port = free_port()
        stderr = os.open(log or os.devnull, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, str(script), str(port), *args, stderr=stderr
            )
        finally:
            os.close(stderr)
        try:
            await wait_port(port, proc)
        except RuntimeError:
            await stop(proc)
            continue
        try:
            yield f"http://127.0.0.1:{port}", proc
        finally:
            await stop(proc)
        return
    raise RuntimeError(f"{script.name} did not start")


class RedisProcess:
    """A `redis-server` on a free port in a temporary directory; `kill()` and `start()` again
    on the same port simulate an outage. `aof`: append-only file, fsync every second (what
    survives a restart: `restart()` stops it with SIGTERM, so Redis writes what it holds)."""

    def __init__(self, *, aof: bool = False) -> None:
        assert REDIS is not None, "redis-server is required"
        self.aof = aof
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="mcpkit-redis-")
        self.proc: asyncio.subprocess.Process | None = None
        self._reader: Any = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        assert REDIS is not None
        self.proc = await asyncio.create_subprocess_exec(
            REDIS,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "yes" if self.aof else "no",
            "--appendfsync",
            "everysec",
            "--dir",
            self.dir,
            stdout=asyncio.subprocess.DEVNULL,
        )
        await wait_port(self.port, self.proc)

    async def restart(self) -> None:
        assert self.proc is not None
        await stop(self.proc)
        await self.start()

    async def command_counts(self) -> dict[str, int]:
        """`INFO commandstats`: calls per command name since Redis started. One connection
        for every reading, so that reading adds nothing but its INFO."""
        if self._reader is None:
            import redis.asyncio as aioredis

            self._reader = aioredis.from_url(self.url)
        stats = await self._reader.info("commandstats")
        return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}

    async def kill(self) -> None:
        """SIGKILL: the connections drop as in a crash."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()

    async def close(self) -> None:
        if self._reader is not None:
            await self._reader.aclose()
        if self.proc is not None:
            await stop(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)


@contextlib.asynccontextmanager
async def redis_process() -> AsyncIterator[RedisProcess]:
    """A running `RedisProcess` (to kill and start again; `support.redis_server` when a URL is
    all a test needs)."""
    redis = RedisProcess()
    await redis.start()
    try:
        yield redis
    finally:
        await redis.close()
