"""Real processes, as a user runs them: `mcpkit run` says where it serves, `--reload` restarts on a
change, and Ctrl-C (SIGINT) ends `mcpkit run`, `mcpkit call` and a `server.run()` script with
status 130 and no traceback."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import pytest

from support import ROOT, default_sigint, free_port, scaled, wait_port

pytestmark = pytest.mark.timing

SERVER = str(ROOT / "tests/servers/cli_server.py")
MCPKIT = [sys.executable, "-m", "mcpkit"]


class Proc:
    """A child whose stderr is read line by line (its lines are the readiness events)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []

    @classmethod
    async def start(cls, *argv: str) -> Proc:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            preexec_fn=default_sigint,
        )
        return cls(proc)

    async def line_with(self, text: str, seconds: float = 30) -> str:
        assert self.proc.stderr is not None
        async with asyncio.timeout(scaled(seconds)):
            while True:
                raw = await self.proc.stderr.readline()
                if not raw:
                    raise AssertionError(f"stderr ended before {text!r}: {self.lines}")
                line = raw.decode().rstrip("\n")
                self.lines.append(line)
                if text in line:
                    return line

    async def interrupt(self) -> tuple[int, str]:
        """SIGINT, as Ctrl-C sends it; the exit status and the rest of stderr."""
        self.proc.send_signal(signal.SIGINT)
        assert self.proc.stderr is not None
        rest = await asyncio.wait_for(self.proc.stderr.read(), scaled(30))
        code = await asyncio.wait_for(self.proc.wait(), scaled(30))
        return code, "\n".join(self.lines) + "\n" + rest.decode()


async def test_run_http_prints_its_url_and_stops_on_ctrl_c() -> None:
    port = free_port()
    proc = await Proc.start(*MCPKIT, "run", SERVER, "--transport", "http", "--port", str(port))
    line = await proc.line_with("serving")
    assert line == (
        f"mcpkit: serving cli-test 0.1 (3 tools) at http://127.0.0.1:{port}/mcp (Ctrl-C to stop)"
    )
    await wait_port(port, proc.proc)
    code, err = await proc.interrupt()
    assert code == 130 and "Traceback" not in err, err


async def test_run_stdio_stops_on_ctrl_c() -> None:
    proc = await Proc.start(*MCPKIT, "run", SERVER)
    assert await proc.line_with("serving") == "mcpkit: serving cli-test 0.1 (3 tools) over stdio"
    code, err = await proc.interrupt()
    assert code == 130 and "Traceback" not in err, err


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_server_run_script_stops_on_ctrl_c(transport: str) -> None:
    port = free_port()
    args = ["http", str(port)] if transport == "http" else []
    proc = await Proc.start(sys.executable, SERVER, *args)
    if transport == "http":
        await wait_port(port, proc.proc)
    else:  # ready once it answers a request
        assert proc.proc.stdin is not None and proc.proc.stdout is not None
        proc.proc.stdin.write(
            b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":'
            b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}\n'
        )
        await proc.proc.stdin.drain()
        assert b'"id":1' in await asyncio.wait_for(proc.proc.stdout.readline(), scaled(30))
    code, err = await proc.interrupt()
    assert code == 130 and "Traceback" not in err and "KeyboardInterrupt" not in err, err


async def test_call_stops_on_ctrl_c() -> None:
    proc = await Proc.start(*MCPKIT, "call", SERVER, "wait")
    await proc.line_with("progress 1/2 waiting")  # the tool is running
    code, err = await proc.interrupt()
    assert code == 130 and "Traceback" not in err, err


TOOL = """
@server.tool()
def {name}() -> str:
    return "{name}"
"""


async def test_reload_restarts_when_the_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "dev_server.py"
    path.write_text("from mcpkit import Server\nserver = Server('dev')\n" + TOOL.format(name="a"))
    port = free_port()
    proc = await Proc.start(
        *MCPKIT, "run", str(path), "-T", "http", "--port", str(port), "--reload"
    )
    assert "(1 tool)" in await proc.line_with("serving")
    await wait_port(port, proc.proc)
    path.write_text(path.read_text() + TOOL.format(name="b"))
    assert "dev_server.py changed; restarting" in await proc.line_with("restarting")
    assert "(2 tools)" in await proc.line_with("serving")
    code, err = await proc.interrupt()
    assert code == 130 and "Traceback" not in err, err
