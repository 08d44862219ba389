"""stdio client transport: run the server as a subprocess, one JSON message per line.

A reader task routes responses to the waiting calls by id and notifications to the
callback. When the process dies every pending call fails at once with `ConnectionClosed`.
Shutdown follows TR-STDIO-11: close stdin, wait, then SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import deque
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from ..protocol.errors import MCPError
from ..protocol.jsonrpc import (
    JSONObject,
    Notification,
    Request,
    RequestId,
    Response,
    decode,
    encode_notification,
    encode_request,
)
from ..protocol.transport import NotificationSink, ServerRequestHandler, TransportCapabilities, also
from ..protocol.versions import META_SUBSCRIPTION_ID
from .errors import ConnectFailed, ConnectionClosed, TransportError
from .transport import NotificationHandler, answer_request, dispatch_notification, logger

if TYPE_CHECKING:
    from .legacy_stdio import StdioSessionChannel

__all__ = ["StderrMode", "StdioTransport"]

StderrMode = Literal["inherit", "capture", "discard"]
"""`inherit`: the server's stderr goes to ours; `capture`: keep the last lines in
`stderr_tail`; `discard`: drop it. stderr never signals an error (TR-STDIO-03)."""

_LINE_LIMIT = 64 * 1024 * 1024  # longest accepted stdout line (one message)
_STDERR_TAIL = 50


class StdioTransport:
    """Spawns `command` and speaks newline-delimited JSON-RPC over its stdin/stdout.

    `env` entries are added to the current environment (with `inherit_env=False` they are the
    whole environment: a sandboxed server's launcher gets only what it passes on); `cwd` is the
    working directory.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: StderrMode = "inherit",
        on_notification: NotificationHandler | None = None,
        shutdown_timeout: float = 2.0,
        label: str | None = None,
        inherit_env: bool = True,
    ) -> None:
        if not command:
            raise ValueError("the server command is empty")
        self.command = list(command)
        #: Names the server in what is logged about it: its config name, else the command.
        self.label = label or _short(self.command)
        self.env = dict(env) if env is not None else None
        self.inherit_env = inherit_env
        self.cwd = cwd
        self.stderr_mode: StderrMode = stderr
        self.on_notification = on_notification
        self.shutdown_timeout = shutdown_timeout
        self.stderr_tail: deque[str] = deque(maxlen=_STDERR_TAIL)
        self._proc: asyncio.subprocess.Process | None = None
        self._pending: dict[RequestId, asyncio.Future[Response]] = {}
        self._streams: dict[RequestId, asyncio.Queue[JSONObject | None]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._handlers: set[asyncio.Task[None]] = set()
        self._closed: ConnectionClosed | None = None
        #: Legacy sessions only: answers server→client requests (sampling, elicitation, roots, ping).
        self.on_request: ServerRequestHandler | None = None
        self.capabilities = TransportCapabilities(
            kind="stdio",
            era_key="stdio:" + " ".join(self.command),
            notifications=self.add_notification_handler,
            stream=self.stream,
            open_session=self.open_session,
        )

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc is not None else None

    async def exit_code(self, seconds: float) -> int | None:
        """The process's exit code, waiting up to `seconds` for it (a broken pipe is often seen
        before the exit is reaped); None if it is still running (or never started)."""
        if self._proc is not None and self._proc.returncode is None:
            await self._wait_exit(self._proc, seconds)
        return self.returncode

    async def start(self) -> None:
        if self._proc is not None:
            return
        stderr = {"inherit": None, "capture": asyncio.subprocess.PIPE}.get(
            self.stderr_mode, asyncio.subprocess.DEVNULL
        )
        env = {**os.environ, **self.env} if self.env is not None else None
        if not self.inherit_env:
            env = dict(self.env or {})
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                env=env,
                cwd=self.cwd,
                limit=_LINE_LIMIT,
            )
        except OSError as exc:
            raise ConnectFailed(f"cannot start {self.command[0]!r}: {exc}") from exc
        self._tasks.append(asyncio.create_task(self._read_stdout(), name="mcpkit-stdio-reader"))
        if self._proc.stderr is not None:
            self._tasks.append(asyncio.create_task(self._read_stderr(), name="mcpkit-stdio-err"))

    def accept_tools(self, tools: list[JSONObject]) -> list[JSONObject]:
        return tools  # x-mcp-header only matters on HTTP (TR-XMH-09)

    def add_notification_handler(self, handler: NotificationHandler) -> None:
        """Server notifications go to `handler` too (`capabilities.notifications`)."""
        self.on_notification = also(self.on_notification, handler)

    def open_session(
        self, on_request: ServerRequestHandler, on_notification: NotificationSink
    ) -> StdioSessionChannel:
        """A 2025-11-25 session: the process is the session (`legacy_stdio.py`)."""
        from .legacy_stdio import StdioSessionChannel

        return StdioSessionChannel(self, on_request, on_notification)

    def route(
        self,
        on_request: ServerRequestHandler | None,
        on_notification: NotificationHandler | None,
    ) -> tuple[ServerRequestHandler | None, NotificationHandler | None]:
        """Send the server's requests and notifications to these; returns the ones replaced."""
        replaced = (self.on_request, self.on_notification)
        self.on_request, self.on_notification = on_request, on_notification
        return replaced

    async def request(self, request_id: RequestId, method: str, params: JSONObject) -> Response:
        if self._closed is not None:
            raise self._closed
        if self._proc is None or self._proc.stdin is None:
            raise TransportError("stdio transport is not started")
        if request_id in self._pending:
            raise ValueError(f"request id {request_id!r} is already in flight")  # BASE-05
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._write(encode_request(request_id, method, params))
            return await future
        except asyncio.CancelledError:
            if self._pending.pop(request_id, None) is not None and self._closed is None:
                self._cancel_on_wire(request_id)
            raise
        finally:
            self._pending.pop(request_id, None)

    async def stream(
        self, request_id: RequestId, method: str, params: JSONObject
    ) -> AsyncGenerator[JSONObject, None]:
        """A long-lived request (subscriptions/listen): the messages for it, routed by
        `subscriptionId` (TR-STDIO-08); leaving the iteration sends `notifications/cancelled`."""
        if self._closed is not None:
            raise self._closed
        queue: asyncio.Queue[JSONObject | None] = asyncio.Queue()
        self._streams[request_id] = queue
        try:
            await self._write(encode_request(request_id, method, params))
            while True:
                item = await queue.get()
                if item is None:
                    if self._closed is not None:
                        raise self._closed
                    return
                yield item
                if "id" in item:  # the final response ends the stream
                    return
        finally:
            if self._streams.pop(request_id, None) is not None and self._closed is None:
                self._cancel_on_wire(request_id)

    async def notify(self, method: str, params: JSONObject | None = None) -> None:
        await self._write(encode_notification(method, params))

    async def _write(self, line: bytes) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(line + b"\n")  # orjson output never holds a newline
            await self._proc.stdin.drain()
        except (ConnectionError, RuntimeError) as exc:
            raise self._closed or ConnectionClosed(f"cannot write to the server: {exc}") from exc

    def _cancel_on_wire(self, request_id: RequestId) -> None:
        """Tell the server we gave up on a request (TR-STDIO-09, CANC-05); best effort."""
        stdin = self._proc.stdin if self._proc is not None else None
        if stdin is None or stdin.is_closing():
            return
        params: JSONObject = {"requestId": request_id, "reason": "cancelled by the client"}
        with contextlib.suppress(ConnectionError, RuntimeError):
            stdin.write(encode_notification("notifications/cancelled", params) + b"\n")

    async def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        try:
            while True:
                try:
                    line = await stdout.readline()
                except ValueError:  # a line longer than the limit: the stream is unusable
                    logger.error(
                        "server %r wrote a line longer than %d bytes", self.label, _LINE_LIMIT
                    )
                    break
                if not line:
                    break
                if line.strip():
                    await self._route(line)
        finally:
            await self._on_eof()

    async def _route(self, line: bytes) -> None:
        try:
            message = decode(line)
        except MCPError as exc:
            logger.warning("server %r: ignoring an invalid line on its stdout: %s", self.label, exc)
            return
        if isinstance(message, Response):
            stream = self._streams.get(message.id) if message.id is not None else None
            if stream is not None:
                stream.put_nowait(
                    {
                        "jsonrpc": "2.0",
                        "id": message.id,
                        "result": message.result,
                        "error": message.error,
                    }
                )
                return
            future = self._pending.pop(message.id, None) if message.id is not None else None
            if future is not None and not future.done():
                future.set_result(message)
            elif message.id is None and message.is_error:
                logger.warning("server %r sent an error without id: %r", self.label, message.error)
            else:  # an answer to a request given up on (timed out, cancelled): CANC-12
                logger.debug("discarding a late response to abandoned request %r", message.id)
        elif isinstance(message, Notification):
            meta = (message.params or {}).get("_meta")
            sub = meta.get(META_SUBSCRIPTION_ID) if isinstance(meta, dict) else None
            stream = self._streams.get(sub) if sub is not None else None
            if stream is not None:
                stream.put_nowait(
                    {"jsonrpc": "2.0", "method": message.method, "params": message.params}
                )
            else:
                await dispatch_notification(self.on_notification, message)
        elif isinstance(message, Request):
            if self.on_request is None:
                logger.warning(
                    "ignoring request %r from server %r (TR-STDIO-07)", message.method, self.label
                )
            else:
                task = asyncio.create_task(self._answer(message))
                self._handlers.add(task)
                task.add_done_callback(self._handlers.discard)

    async def _answer(self, request: Request) -> None:
        """Legacy era: run the handler for a server→client request and write its response."""
        assert self.on_request is not None
        line = await answer_request(self.on_request, request)
        with contextlib.suppress(TransportError):
            await self._write(line)

    async def _on_eof(self) -> None:
        """stdout closed: the process is gone (or going); fail everything still waiting."""
        rc: int | None = None
        if self._proc is not None:
            with contextlib.suppress(TimeoutError):
                rc = await asyncio.wait_for(self._proc.wait(), 0.5)
        others = [t for t in self._tasks if t is not asyncio.current_task()]
        if others:
            await asyncio.wait(others, timeout=0.2)  # let the last stderr lines in
        detail = f" with code {rc}" if rc is not None else ""
        tail = f": {self.stderr_tail[-1]}" if self.stderr_tail else ""
        self._fail_all(ConnectionClosed(f"the server process exited{detail}{tail}"))

    def _fail_all(self, error: ConnectionClosed) -> None:
        if self._closed is None:
            self._closed = error
        for queue in self._streams.values():
            queue.put_nowait(None)
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(self._closed)

    async def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        with contextlib.suppress(ValueError, ConnectionError):
            async for raw in self._proc.stderr:
                self.stderr_tail.append(raw.decode("utf-8", errors="replace").rstrip())

    async def close(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if self._closed is None:
            self._closed = ConnectionClosed("the transport is closed")
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
            with contextlib.suppress(ConnectionError, RuntimeError):
                await proc.stdin.wait_closed()
        if not await self._wait_exit(proc, self.shutdown_timeout):
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            if not await self._wait_exit(proc, self.shutdown_timeout):
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if self._tasks:
            _, stuck = await asyncio.wait(self._tasks, timeout=1.0)
            for task in stuck:  # e.g. a grandchild still holds the pipes open
                task.cancel()
            if stuck:
                await asyncio.gather(*stuck, return_exceptions=True)
        self._fail_all(self._closed)

    @staticmethod
    async def _wait_exit(proc: asyncio.subprocess.Process, seconds: float) -> bool:
        try:
            await asyncio.wait_for(proc.wait(), seconds)
        except TimeoutError:
            return False
        return True


def _short(command: list[str]) -> str:
    """`python weather.py`, not the interpreter's and the script's full paths."""
    words = [os.path.basename(word) if os.sep in word else word for word in command[:3]]
    return " ".join(words) + (" …" if len(command) > 3 else "")
