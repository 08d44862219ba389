"""stdio: newline-delimited JSON-RPC on stdin/stdout (TR-STDIO-*).

Requests run concurrently, one task each; `notifications/cancelled` cancels one (and ends a
listen stream). Nothing but MCP messages reaches stdout: the real stdout is kept for the protocol
and `sys.stdout` (print, stray logging) is pointed at stderr (TR-STDIO-04).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import stat
import sys
import threading
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from ...protocol import jsonrpc
from ...protocol.errors import InvalidRequest, MCPError
from ...protocol.jsonrpc import encode_error
from ...telemetry.context import current_transport
from ..admission import Refused, admit
from ..readiness import watch
from ..session_core import ID_IN_USE, InFlight, dispatch, listen_frames

if TYPE_CHECKING:
    from ..admission import ClientNotification, ClientResponse, OpenSession, ServerRequest
    from ..auth.resource import EnvironmentAuth
    from ..legacy.session import LegacySession
    from ..server import Server
    from .legacy_stdio import StdioLegacy

MAX_LINE = 16 * 1024 * 1024
#: Bytes read from stdin at a time: every whole line in them is handled before the next read.
READ_SIZE = 1 << 16
#: Lines written to stdout per system call at most. Pipelined requests answered in the same
#: turn of the event loop share writes, and the peer still starts on the first answers while
#: later ones are computed (a whole turn in one write measured slower at 16 in flight).
WRITE_BATCH = 8
#: Seconds keyed calls still running at EOF get to reach their outcome (after the in-flight
#: requests' own 5 s): a re-send to the next process then replays it (with a shared store).
KEYED_GRACE = 60.0
log = logging.getLogger("mcpkit.stdio")


class StdioConnection:
    """One peer on a pair of byte streams. Used by `run_stdio` and by tests with pipes."""

    def __init__(
        self,
        server: Server,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        keepalive_interval: float | None = None,
    ) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        self.in_flight: InFlight[asyncio.Task[None]] = InFlight()
        self.tasks = self.in_flight.tasks  # by request id
        self.keepalive_interval = keepalive_interval
        self._unsent: list[bytes] = []  # lines written in this turn of the event loop
        self.legacy: StdioLegacy | None = None
        if server.legacy:  # dual-era: `initialize` opens this process's 2025-11-25 session
            from .legacy_stdio import StdioLegacy

            self.legacy = StdioLegacy(server, self.write)
            if server.telemetry is not None:
                legacy = self.legacy
                server.telemetry.session_counts.append(lambda: int(legacy.session is not None))

    def write(self, data: bytes) -> None:
        """One message, a line on stdout. While other requests are in flight, lines leave in
        groups of up to `WRITE_BATCH`, one system call each, the last group at the end of the
        event loop's turn; otherwise at once."""
        unsent = self._unsent
        unsent.append(data)
        unsent.append(b"\n")
        if len(unsent) >= 2 * WRITE_BATCH or self._in_flight() <= 1:
            self.flush()
        elif len(unsent) == 2:
            asyncio.get_running_loop().call_soon(self.flush)

    def _in_flight(self) -> int:
        session = self.legacy.session if self.legacy is not None else None
        return len(self.tasks) + (len(session.tasks) if session is not None else 0)

    def flush(self) -> None:
        if self._unsent:
            data = b"".join(self._unsent)
            self._unsent.clear()
            self.writer.write(data)

    async def emit(self, method: str, params: dict[str, Any]) -> None:
        """A notification on stdout (every modern request's `emit`)."""
        self.write(jsonrpc.encode_notification(method, params))

    async def serve(self) -> None:
        """Read until EOF, then let in-flight requests finish (TR-STDIO-12)."""
        current_transport.set("pipe")  # every request task inherits it (network.transport)
        await self.server.startup()
        watcher = None
        if self.server.readiness.has_checks:  # no /readyz on stdio: changes go to the log
            watcher = asyncio.get_running_loop().create_task(watch(self.server.readiness))
        try:
            await self._serve()
            await self.server.settle_detached(KEYED_GRACE)  # their outcome is promised
        finally:
            if watcher is not None:
                watcher.cancel()
            await self.server.shutdown()

    async def _serve(self) -> None:
        """Lines as they arrive: one read per chunk of input, not one per line."""
        read = self.reader.read
        partial: list[bytes] = []  # the start of a line still arriving
        size = 0
        oversized = False  # dropping the rest of a line over MAX_LINE
        while True:
            chunk = await read(READ_SIZE)
            if not chunk:
                break
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                if oversized:
                    oversized = False
                elif partial:
                    partial.append(chunk[start:end])
                    self._line(b"".join(partial))
                    partial.clear()
                else:
                    self._line(chunk[start:end])
                start = end + 1
                size = 0
            if start < len(chunk) and not oversized:
                size += len(chunk) - start
                if size > MAX_LINE:  # drop it, answer without an id
                    oversized = True
                    partial.clear()
                    self.write(
                        encode_error(None, InvalidRequest(f"Message larger than {MAX_LINE} bytes"))
                    )
                else:
                    partial.append(chunk[start:])
            if self.writer.transport.get_write_buffer_size() > 1 << 20:
                self.flush()
                await self.writer.drain()
        if partial:  # the last line, without its newline
            self._line(b"".join(partial))
        self.server.subscriptions.close_all()
        running = self.in_flight.running() + (self.legacy.tasks() if self.legacy else [])
        if running:
            await asyncio.wait(running, timeout=5)
            for task in running:
                task.cancel()
        if self.legacy is not None:
            self.legacy.close()
        self.flush()
        with contextlib.suppress(Exception):
            await self.writer.drain()

    def _line(self, line: bytes) -> None:
        line = line.strip()
        if line:
            self.receive(line)

    def receive(self, line: bytes) -> None:
        """One line: through the front door, then act on what it says (`dispatch`)."""
        legacy = self.legacy
        session = legacy.session if legacy is not None else None
        try:
            admission = admit(
                self.server,
                line,
                None,
                session,
                self.emit,
                legacy.outbox if legacy is not None else None,
            )
        except Refused as refused:
            if refused.notification:  # nothing to answer: one line in the log (stderr)
                log.warning("dropped a client message: %s", refused.error.message)
            else:
                self.write(encode_error(refused.request_id, refused.error))
            return
        dispatch(admission, self, session)

    # -- what each admitted message does (`session_core.Handler`) --------------------------------
    def call(self, request: ServerRequest, session: LegacySession | None) -> None:
        self._start(request, self._request(request))

    def listen(self, request: ServerRequest, session: LegacySession | None) -> None:
        self._start(request, self._listen(request))

    def session_request(self, request: ServerRequest, session: LegacySession | None) -> None:
        assert session is not None
        session.start(request)

    def open_session(self, request: OpenSession, session: LegacySession | None) -> None:
        assert self.legacy is not None
        self.legacy.open(request)

    def notification(self, note: ClientNotification, session: LegacySession | None) -> None:
        self.in_flight.cancel(note)
        if session is not None:
            session.receive_notification(note)

    def response(self, response: ClientResponse, session: LegacySession | None) -> None:
        assert session is not None
        session.receive_response(response.message)

    def nothing(self, session: LegacySession | None) -> None:
        return None

    def _start(self, request: ServerRequest, coro: Coroutine[Any, Any, None]) -> None:
        """A task for the request, unless its id is in use (BASE-05). The task forgets itself
        as it ends, or is forgotten when cancelled by id. (`InFlight`'s own dict, read here
        without its two method calls: this runs for every stdio request.)"""
        tasks = self.tasks
        if request.id in tasks:
            coro.close()
            self.write(encode_error(request.id, ID_IN_USE))
            return
        tasks[request.id] = asyncio.get_running_loop().create_task(coro)

    async def _request(self, request: ServerRequest) -> None:
        try:
            self.write(await self.server.answer(request))
        except asyncio.CancelledError:
            pass
        finally:
            self.in_flight.forget(request.id, asyncio.current_task())

    async def _listen(self, request: ServerRequest) -> None:
        try:
            sub = await self.server.open_subscription(request)
        except MCPError as exc:
            self.write(encode_error(request.id, exc))
            self.in_flight.forget(request.id, asyncio.current_task())
            return
        frames = listen_frames(sub, request.id, self.keepalive_interval)
        try:
            async for frame in frames:
                if frame is not None:
                    self.write(jsonrpc.dumps(frame))
        except asyncio.CancelledError:
            return
        finally:
            await frames.aclose()
            self.server.subscriptions.close(sub)
            self.in_flight.forget(request.id, asyncio.current_task())


def _streamable(fd: int) -> bool:
    """Pipes, sockets and terminals work with the event loop; regular files do not."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


class _FileWriter:
    """stdout redirected to a regular file: plain blocking writes (files do not stall)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.transport = self

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    def get_write_buffer_size(self) -> int:
        return 0

    async def drain(self) -> None:
        return None


def _feed_from_thread(
    loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, fd: int
) -> None:
    """stdin is a regular file: read it on a thread and feed the reader."""
    with os.fdopen(os.dup(fd), "rb") as f:
        for line in f:
            loop.call_soon_threadsafe(reader.feed_data, line)
    loop.call_soon_threadsafe(reader.feed_eof)


async def serve_stdio(server: Server, auth: EnvironmentAuth | None = None) -> None:
    if auth is not None:
        from ..auth.access import current_access

        # BASE-31: one credential for the whole connection, from the environment; every
        # request task inherits it.
        current_access.set(await auth.authenticate())
    loop = asyncio.get_running_loop()
    out_fd = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints go to stderr (TR-STDIO-04)
    sys.stdout = sys.stderr
    reader = asyncio.StreamReader(limit=MAX_LINE)
    in_fd = sys.stdin.fileno()
    if _streamable(in_fd):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    else:
        threading.Thread(target=_feed_from_thread, args=(loop, reader, in_fd), daemon=True).start()
    writer: Any
    if _streamable(out_fd):
        proto_out = os.fdopen(out_fd, "wb", buffering=0)
        w_transport, w_protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, proto_out
        )
        writer = asyncio.StreamWriter(w_transport, w_protocol, None, loop)
    else:
        writer = _FileWriter(out_fd)
    from .tuning import tune_gc

    tune_gc()
    await StdioConnection(server, reader, writer).serve()


def run_stdio(server: Server, auth: EnvironmentAuth | None = None) -> None:
    """Serve stdin/stdout until EOF. Ctrl-C raises KeyboardInterrupt; a second one, while the
    first is still stopping (a sync tool finishing on its thread), exits 130 at once."""
    main = threading.current_thread() is threading.main_thread()
    ours = main and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    previous = signal.signal(signal.SIGINT, _interrupted) if ours else None
    try:
        try:
            import uvloop
        except ImportError:
            asyncio.run(serve_stdio(server, auth))
        else:
            uvloop.run(serve_stdio(server, auth))
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _interrupted(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGINT, _stop_now)
    # os.write: a signal handler must not re-enter the buffered stream it may have interrupted
    os.write(2, b"mcpkit: stopping; press Ctrl-C again to stop now\n")
    raise KeyboardInterrupt


def _stop_now(signum: int, frame: Any) -> None:
    sys.stderr.flush()
    os._exit(130)
