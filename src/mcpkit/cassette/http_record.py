"""`mcpkit record --out FILE URL`: a Streamable HTTP server in front of the server at URL, for
either era. Each request goes on as it came (hop-by-hop headers aside) and each answer comes
back as it came, JSON or an SSE stream passed on chunk by chunk; every message read on the way
(a POSTed body, a JSON answer, each SSE event's data) goes to the cassette, redacted, with its
headers (redacted too: `Authorization`, cookies, ...).
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import ClientError, ClientSession, ClientTimeout, web

from .format import CassetteWriter, Side
from .redact import Redactor

__all__ = ["SSEData", "record_app", "serve_recorder"]

#: Headers of one connection, never forwarded (and what aiohttp sets itself).
_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "transfer-encoding",
        "content-length",
        "content-encoding",
        "accept-encoding",
        "host",
        "upgrade",
        "te",
        "trailer",
        "proxy-authenticate",
        "proxy-connection",
    }
)


class _Recorder:
    def __init__(self, url: str, writer: CassetteWriter, redactor: Redactor) -> None:
        self.url = url
        self.writer = writer
        self.redactor = redactor
        self.session: ClientSession | None = None

    def note(self, side: Side, body: bytes, headers: Any) -> None:
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            return  # not JSON-RPC (an error page): passed on, not a message
        kept = self.redactor.headers(
            {str(k): v for k, v in headers.items() if k.lower() not in _HOP}
        )
        for message in value if isinstance(value, list) else [value]:
            if isinstance(message, dict):
                self.writer.add(side, self.redactor.value(message), kept)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        assert self.session is not None
        body = await request.read()
        if body:
            self.note("client", body, request.headers)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        try:
            return await self._forward(request, headers, body)
        except ClientError as exc:
            reason = f"mcpkit record: cannot reach {self.url} ({exc}); is the server up?"
            return web.Response(status=502, text=reason)

    async def _forward(
        self, request: web.Request, headers: dict[str, str], body: bytes
    ) -> web.StreamResponse:
        assert self.session is not None
        async with self.session.request(
            request.method, self.url, headers=headers, data=body or None
        ) as upstream:
            passed = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP}
            if upstream.headers.get("Content-Type", "").startswith("text/event-stream"):
                response = web.StreamResponse(status=upstream.status, headers=passed)
                await response.prepare(request)
                events = SSEData()
                async for chunk in upstream.content.iter_any():
                    for data in events.feed(chunk):
                        self.note("server", data, upstream.headers)
                    await response.write(chunk)
                return response
            payload = await upstream.read()
            if payload and "json" in upstream.headers.get("Content-Type", ""):
                self.note("server", payload, upstream.headers)
            return web.Response(status=upstream.status, body=payload, headers=passed)


class SSEData:
    """The `data` of each complete SSE event in a stream read in chunks."""

    def __init__(self) -> None:
        self.buffer = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        self.buffer += chunk.replace(b"\r\n", b"\n")
        found = []
        while b"\n\n" in self.buffer:
            event, self.buffer = self.buffer.split(b"\n\n", 1)
            data = [
                line[5:].removeprefix(b" ")
                for line in event.split(b"\n")
                if line.startswith(b"data:")
            ]
            if data:
                found.append(b"\n".join(data))
        return found


def record_app(url: str, writer: CassetteWriter, redactor: Redactor) -> web.Application:
    recorder = _Recorder(url, writer, redactor)

    async def opened(app: web.Application) -> None:
        recorder.session = ClientSession(timeout=ClientTimeout(total=None), auto_decompress=True)

    async def closed(app: web.Application) -> None:
        if recorder.session is not None:
            await recorder.session.close()
        writer.close()

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.on_startup.append(opened)
    app.on_cleanup.append(closed)
    app.router.add_route("*", "/mcp", recorder.handle)
    return app


def serve_recorder(
    url: str, writer: CassetteWriter, redactor: Redactor, host: str, port: int
) -> None:
    web.run_app(
        record_app(url, writer, redactor), host=host, port=port, print=None, shutdown_timeout=1.0
    )
