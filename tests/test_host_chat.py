"""`mcpkit host` in a terminal (a pty): `@server:uri` attaches a resource to the message and
`/server:prompt key=value` runs a prompt; the model is the real SDK against a fake API."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pty
import sys
from pathlib import Path
from typing import Any

import pytest

from host_support import PROVIDERS, FakeAPI, api_path, scripted
from support import ROOT, scaled


class Terminal:
    """A process on a pseudo-terminal; `expect` waits for text on its screen."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.proc = asyncio.create_subprocess_exec(
            *argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        self._slave = slave
        self.screen = ""
        self._changed = asyncio.Event()

    async def __aenter__(self) -> Terminal:
        self.process = await self.proc
        os.close(self._slave)
        asyncio.get_running_loop().add_reader(self.master, self._read)
        return self

    def _read(self) -> None:
        try:
            data = os.read(self.master, 65536)
        except OSError:
            data = b""
        if not data:
            asyncio.get_running_loop().remove_reader(self.master)
        self.screen += data.decode(errors="replace")
        self._changed.set()

    async def expect(self, text: str, start: int = 0, timeout: float = 30) -> int:
        """Wait until `text` shows after position `start`; returns where it ends."""
        async with asyncio.timeout(scaled(timeout)):
            while (at := self.screen.find(text, start)) < 0:
                self._changed.clear()
                await self._changed.wait()
        return at + len(text)

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\r")

    async def __aexit__(self, *exc: Any) -> None:
        asyncio.get_running_loop().remove_reader(self.master)
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
        await self.process.wait()
        os.close(self.master)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_chat_attaches_resources_and_runs_prompts(provider: str, tmp_path: Path) -> None:
    server = ROOT / "tests/servers/context_server.py"
    (tmp_path / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "docs": {
                        "command": sys.executable,
                        "args": [str(server), "docs"],
                        "trustNewTools": True,  # a new server, not asked about (quarantine)
                    }
                }
            }
        )
    )
    steps: list[Any] = ["GUIDE-ANSWER", "GREETING-ANSWER"]
    async with FakeAPI(api_path(provider), scripted(provider, steps)) as api:
        env = {
            **os.environ,
            "HOME": str(tmp_path),
            "COLUMNS": "200",
            "ANTHROPIC_API_KEY": "test",
            "ANTHROPIC_BASE_URL": api.url,
            "OPENAI_API_KEY": "test",
            "OPENAI_BASE_URL": api.url + "/v1",
        }
        argv = [sys.executable, "-m", "mcpkit.cli", "host", "-c", str(tmp_path / "mcp.json")]
        async with Terminal([*argv, "--model", f"{provider}:fake"], env) as term:
            at = await term.expect("you")
            term.type("What does @docs:docs://docs/guide say?")
            at = await term.expect("GUIDE-ANSWER", at)
            at = await term.expect("you", at)
            term.type('/docs:greet name="Ann Lee"')
            at = await term.expect("GREETING-ANSWER", at)
            await term.expect("you", at)
            term.type("")  # an empty line ends the chat
            assert await asyncio.wait_for(term.process.wait(), scaled(30)) == 0
    first, second = (json.dumps(body) for body in api.requests)
    assert "What does @docs:docs://docs/guide say?" in first
    assert "The docs guide: page 1 says hello." in first  # the attached resource
    assert "PROMPT-TEXT: please greet Ann Lee warmly." in second  # the prompt's message
