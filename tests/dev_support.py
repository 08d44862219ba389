"""What the `mcpkit dev` tests share: the command as a real subprocess with no model key in its
environment, the address it prints, and the page's API as the page calls it (cookie, CSRF)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from support import ROOT, default_sigint, scaled

#: Environment variables that would give the host a model (removed: `dev` must not need one).
MODEL_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY")


def keyless_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in MODEL_KEYS}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")  # the host log lands in tmp_path
    return env


@dataclass
class Running:
    proc: asyncio.subprocess.Process
    url: str  # the address printed, with its token
    lines: list[str]

    @property
    def base(self) -> str:
        return self.url.split("?")[0].rstrip("/")


@contextlib.asynccontextmanager
async def mcpkit(*args: str, tmp_path: Path, command: str = "dev") -> AsyncIterator[Running]:
    """`mcpkit COMMAND ARGS` until it prints its address; Ctrl-C at the end (status 0 or 130,
    no traceback)."""
    proc = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "mcpkit.cli", command, *args],
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=ROOT,
        env=keyless_env(tmp_path),
        preexec_fn=default_sigint,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        while True:
            line = (await asyncio.wait_for(proc.stdout.readline(), scaled(60))).decode()
            assert line, f"mcpkit {command} ended before printing its address: {lines}"
            lines.append(line)
            found = re.search(r"open (http://\S+\?token=\S+)", line)
            if found:
                break
        lines.append((await asyncio.wait_for(proc.stdout.readline(), scaled(30))).decode())
        yield Running(proc, found.group(1), lines)
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGINT)
        rest = (await asyncio.wait_for(proc.communicate(), scaled(30)))[0].decode()
        lines.append(rest)
    out = "".join(lines)
    assert proc.returncode in (0, 130), out
    assert "Traceback" not in out, out


class PageAPI:
    """The page's JSON API with its cookie and CSRF token (as `dom.js` calls it)."""

    def __init__(self, http: aiohttp.ClientSession, base: str, csrf: str) -> None:
        self.http, self.base, self.csrf = http, base, csrf

    @classmethod
    @contextlib.asynccontextmanager
    async def login(cls, url: str) -> AsyncIterator[PageAPI]:
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async with http.get(url) as r:
                assert r.status == 200
                page = await r.text()
            found = re.search(r'name="mcpkit-csrf" content="([^"]+)"', page)
            assert found is not None
            yield cls(http, url.split("?")[0].rstrip("/"), found.group(1))

    async def get(self, path: str) -> tuple[int, Any]:
        async with self.http.get(self.base + path, headers={"x-mcpkit-csrf": self.csrf}) as r:
            return r.status, await r.json()

    async def post(self, path: str, body: Any) -> tuple[int, Any]:
        headers = {"x-mcpkit-csrf": self.csrf}
        async with self.http.post(self.base + path, json=body, headers=headers) as r:
            return r.status, await r.json()
