"""A TCP proxy for fault tests: in front of one server (reverse) or as an HTTP forward proxy.

    async with TcpProxy(upstream=("127.0.0.1", port)) as proxy:   # clients use proxy.url
        proxy.cut_next(b"mcp-name: bump", after_head=True)        # break that response
    async with TcpProxy() as proxy:                               # HTTP_PROXY=proxy.url

`cut_next(marker)` arms one fault: the response to the next request whose head contains
`marker` (case-insensitive) is cut: the connection closes before any response byte reaches the
client, or right after the response head (`after_head=True`), once the server has answered.
The server has then done the work, and the client sees a broken connection or stream.
`times=N` cuts the next N such responses (a client's own re-send included).
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType
from urllib.parse import urlsplit


class TcpProxy:
    def __init__(self, upstream: tuple[str, int] | None = None) -> None:
        self.upstream = upstream
        self.heads: list[bytes] = []  # the head of every request seen (first line + headers)
        self.cuts = 0  # responses cut so far
        self._fault: tuple[bytes, bool] | None = None
        self._times = 0  # responses still to cut for the armed fault
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def drop(self) -> int:
        """Abort every connection now (a network path that broke); the number aborted."""
        writers = list(self._writers)
        for writer in writers:
            writer.transport.abort()
        return len(writers)

    def cut_next(self, marker: bytes, *, after_head: bool = False, times: int = 1) -> None:
        self._fault = (marker.lower(), after_head)
        self._times = times

    async def __aenter__(self) -> TcpProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:  # the relays end on their own once their sockets are gone
            writer.transport.abort()
        if self._tasks:
            await asyncio.wait(self._tasks)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        try:
            await self._relay(reader, writer)
        except Exception:  # a socket reset or closed under the relay: that connection ends
            pass
        finally:
            writer.close()
            self._writers.discard(writer)
            self._tasks.discard(task)

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        target = self.upstream or _origin(head)
        up_reader, up_writer = await asyncio.open_connection(*target)
        self._writers.add(up_writer)
        armed = asyncio.Event()  # the response now coming back is the one to cut
        after_head = False

        def see(head: bytes) -> None:
            nonlocal after_head
            self.heads.append(head)
            if self._fault is not None and self._fault[0] in head.lower():
                after_head = self._fault[1]
                self._times -= 1
                if not self._times:
                    self._fault = None
                armed.set()

        async def upward() -> None:
            see(head)
            up_writer.write(head)
            while data := await reader.read(65536):
                end = data.find(b"\r\n\r\n")
                if end >= 0 and b" HTTP/1.1\r\n" in data[:end]:
                    see(data[: end + 4])  # the next request on a kept-alive connection
                up_writer.write(data)
            up_writer.close()

        async def downward() -> None:
            pending = b""
            while data := await up_reader.read(65536):
                if not armed.is_set():
                    writer.write(data)
                    continue
                pending += data
                if not after_head:
                    break  # the answer exists; none of it reaches the client
                end = pending.find(b"\r\n\r\n")
                if end >= 0:
                    writer.write(pending[: end + 4])
                    await writer.drain()
                    break
            if armed.is_set():
                self.cuts += 1
                transport = writer.transport
                transport.abort()  # an abrupt end, as a dropped network path looks

        sides = [asyncio.create_task(upward()), asyncio.create_task(downward())]
        try:
            done, _ = await asyncio.wait(sides, return_when=asyncio.FIRST_COMPLETED)
            if sides[0] in done:
                sides[0].result()  # the client stopped sending: the answer may still come
                await sides[1]
        finally:
            for side in sides:
                side.cancel()
            await asyncio.gather(*sides, return_exceptions=True)
            self._writers.discard(up_writer)
            with contextlib.suppress(OSError):
                up_writer.close()


def _origin(head: bytes) -> tuple[str, int]:
    """A forward proxy's request line names the origin: `POST http://host:port/mcp HTTP/1.1`."""
    target = head.split(b" ", 2)[1].decode()
    parts = urlsplit(target)
    assert parts.hostname is not None, f"not an absolute-form request: {target}"
    return parts.hostname, parts.port or 80
