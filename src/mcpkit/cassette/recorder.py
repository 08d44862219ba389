"""`mcpkit record` over stdio: the client on this process's stdin and stdout, the server a child
process. Each line goes through as it came (the recorder never changes a message); a redacted
copy goes to the cassette first. The child's stderr is this process's.

The end: the client closes stdin → the child's stdin is closed and the child gets a moment
to exit (then SIGTERM, then SIGKILL); SIGTERM or SIGINT here → the child is terminated. Either
way the cassette's header is rewritten before this process exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from typing import Any

import orjson

from .format import CassetteWriter, Side
from .redact import Redactor

__all__ = ["RecordError", "record_stdio"]

#: The longest line passed through (a file read whole fits).
LIMIT = 64 * 1024 * 1024
#: Seconds the child has to exit once its stdin is closed, then once terminated.
GRACE = 1.0


class RecordError(RuntimeError):
    """The server could not be started; the message says why and what to do."""


async def record_stdio(command: list[str], writer: CassetteWriter, redactor: Redactor) -> int:
    """Forward and record until either side ends; the server's exit status."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=LIMIT
        )
    except OSError as exc:
        raise RecordError(
            f"cannot start the server {command[0]!r}: {exc.strerror or exc}; "
            "check the command after --"
        ) from None
    tape = _Tape(writer, redactor)
    stdin, stdin_transport = await _stdin_reader()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    tasks = [
        asyncio.create_task(_to_server(stdin, proc, tape)),
        asyncio.create_task(_to_client(proc, tape)),
    ]
    stopped = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait([tasks[1], stopped], return_when=asyncio.FIRST_COMPLETED)
        await _end(proc, terminate=stop.is_set())
        failed = tasks[1].exception() if tasks[1].done() and not tasks[1].cancelled() else None
        if failed is not None:
            raise RecordError(f"cannot pass on the server's output: {failed}") from None
    finally:
        for task in (*tasks, stopped):
            task.cancel()
        await asyncio.gather(*tasks, stopped, return_exceptions=True)
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        if stdin_transport is not None:
            stdin_transport.close()
        writer.close()
    return proc.returncode if proc.returncode is not None else 1


class _Tape:
    def __init__(self, writer: CassetteWriter, redactor: Redactor) -> None:
        self.writer = writer
        self.redactor = redactor
        self.warned = False

    def note(self, side: Side, raw: bytes) -> None:
        try:
            message: Any = orjson.loads(raw)
        except orjson.JSONDecodeError:
            message = None
        if isinstance(message, dict):
            self.writer.add(side, self.redactor.value(message))
        elif raw.strip() and not self.warned:
            self.warned = True
            print(
                f"mcpkit record: the {side} sent a line that is not a JSON-RPC message; "
                "it went through, the cassette leaves it out",
                file=sys.stderr,
            )


async def _stdin_reader() -> tuple[asyncio.StreamReader, asyncio.BaseTransport | None]:
    reader = asyncio.StreamReader(limit=LIMIT)
    loop = asyncio.get_running_loop()
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
        )
    except ValueError:  # a regular file, not a pipe: read it whole
        reader.feed_data(await asyncio.to_thread(sys.stdin.buffer.read))
        reader.feed_eof()
        return reader, None
    return reader, transport


async def _to_server(stdin: asyncio.StreamReader, proc: Any, tape: _Tape) -> None:
    pipe = proc.stdin
    try:
        while raw := await stdin.readline():
            tape.note("client", raw)
            pipe.write(raw if raw.endswith(b"\n") else raw + b"\n")
            await pipe.drain()
    except ConnectionError:
        return  # the server is gone: _to_client sees its output end
    except ValueError as exc:  # a line over LIMIT
        print(f"mcpkit record: cannot pass on the client's message: {exc}", file=sys.stderr)
    pipe.close()  # the client is done: the server's turn to end


async def _to_client(proc: Any, tape: _Tape) -> None:
    out = sys.stdout.buffer
    while raw := await proc.stdout.readline():
        tape.note("server", raw)
        with contextlib.suppress(BrokenPipeError):
            out.write(raw)
            out.flush()


async def _end(proc: Any, *, terminate: bool) -> None:
    if proc.stdin is not None and not proc.stdin.is_closing():
        proc.stdin.close()
    if not terminate and await _exited(proc):
        return
    with contextlib.suppress(ProcessLookupError):
        proc.terminate()
    if await _exited(proc):
        return
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    await proc.wait()


async def _exited(proc: Any) -> bool:
    try:
        await asyncio.wait_for(proc.wait(), GRACE)
    except TimeoutError:
        return False
    return True
