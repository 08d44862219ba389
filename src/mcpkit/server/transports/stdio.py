"""stdio: newline-delimited JSON-RPC on stdin/stdout (TR-STDIO-*).

Requests run concurrently, one task each; `notifications/cancelled` cancels one (and ends a
listen stream). Nothing but MCP messages reaches stdout: the real stdout is kept for the protocol
and `sys.stdout` (print, stray logging) is pointed at stderr (TR-STDIO-04).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import stat
import sys
import threading
from typing import TYPE_CHECKING, Any

from ...protocol import jsonrpc
from ...protocol.errors import InvalidRequest, MCPError
from ...protocol.jsonrpc import encode_error, encode_result
from ...telemetry.context import current_transport
from ..admission import (
    LEGACY,
    ClientNotification,
    ClientResponse,
    OpenSession,
    Refused,
    ServerRequest,
    admit,
)
from ..readiness import watch

if TYPE_CHECKING:
    from ..auth.resource import EnvironmentAuth
    from ..server import Server
    from .legacy_stdio import StdioLegacy

MAX_LINE = 16 * 1024 * 1024
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
        self.tasks: dict[Any, asyncio.Task[None]] = {}
        self.keepalive_interval = keepalive_interval
        self.legacy: StdioLegacy | None = None
        if server.legacy:  # dual-era: `initialize` opens this process's 2025-11-25 session
            from .legacy_stdio import StdioLegacy

            self.legacy = StdioLegacy(server, self.write)
            if server.telemetry is not None:
                legacy = self.legacy
                server.telemetry.session_counts.append(lambda: int(legacy.session is not None))

    def write(self, data: bytes) -> None:
        self.writer.write(data + b"\n")

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
        finally:
            if watcher is not None:
                watcher.cancel()
            await self.server.shutdown()

    async def _serve(self) -> None:
        while True:
            try:
                line = await self.reader.readline()
            except ValueError:  # a line over the limit: drop it, answer without an id
                self.write(
                    encode_error(None, InvalidRequest(f"Message larger than {MAX_LINE} bytes"))
                )
                continue
            if not line:
                break
            line = line.strip()
            if line:
                self.receive(line)
            if self.writer.transport.get_write_buffer_size() > 1 << 20:
                await self.writer.drain()
        self.server.subscriptions.close_all()
        running = list(self.tasks.values()) + (self.legacy.tasks() if self.legacy else [])
        if running:
            await asyncio.wait(running, timeout=5)
            for task in running:
                task.cancel()
        if self.legacy is not None:
            self.legacy.close()
        with contextlib.suppress(Exception):
            await self.writer.drain()

    def receive(self, line: bytes) -> None:
        """One line: through the front door, then act on what it says."""
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
        kind = type(admission)
        if kind is ServerRequest:
            assert isinstance(admission, ServerRequest)
            if admission.era is LEGACY:
                assert session is not None
                session.start(admission)
            else:
                self._start(admission)
        elif kind is ClientNotification:
            assert isinstance(admission, ClientNotification)
            cancelled = admission.cancelled_id
            task = self.tasks.get(cancelled) if cancelled is not None else None
            if task is not None:
                task.cancel()  # TR-STDIO-10: nothing more is sent for it
            if session is not None:
                session.receive_notification(admission)
        elif kind is OpenSession:
            assert isinstance(admission, OpenSession) and legacy is not None
            legacy.open(admission)
        elif kind is ClientResponse:
            assert isinstance(admission, ClientResponse) and session is not None
            session.receive_response(admission.message)

    def _start(self, request: ServerRequest) -> None:
        if request.id in self.tasks:
            self.write(
                encode_error(
                    request.id, InvalidRequest("Invalid request: id already in use (BASE-05)")
                )
            )
            return
        if request.method == "subscriptions/listen":
            coro = self._listen(request)
        else:
            coro = self._request(request)
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks[request.id] = task
        task.add_done_callback(functools.partial(self._done, request.id))

    def _done(self, request_id: Any, _task: asyncio.Task[None]) -> None:
        self.tasks.pop(request_id, None)

    async def _request(self, request: ServerRequest) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            self.write(await self.server.answer(request))

    async def _listen(self, request: ServerRequest) -> None:
        try:
            sub = await self.server.open_subscription(request)
        except MCPError as exc:
            self.write(encode_error(request.id, exc))
            return
        try:
            self.write(jsonrpc.dumps(sub.acknowledgement()))
            while True:
                try:
                    note = await sub.next(self.keepalive_interval)
                except EOFError:
                    if not sub.overflowed:
                        self.write(encode_result(request.id, sub.final_result()))
                    return
                if note is not None:
                    self.write(jsonrpc.dumps(note))
        except asyncio.CancelledError:
            return
        finally:
            self.server.subscriptions.close(sub)


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
    try:
        import uvloop
    except ImportError:
        asyncio.run(serve_stdio(server, auth))
    else:
        uvloop.run(serve_stdio(server, auth))
