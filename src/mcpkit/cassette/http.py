"""`mcpkit replay --http`: the replayer behind Streamable HTTP (aiohttp), both eras.

A POSTed request is answered with JSON when the recording has nothing before the response,
else with an SSE stream: the recorded notifications, the server's own requests (the stream
waits while the client POSTs its answer, which gets 202), then the response. A request whose
recorded exchange never ended (a listen stream) keeps its stream open until the client leaves.
`initialize` gets an `Mcp-Session-Id`; GET (the standalone stream) is not offered (405), so
what a server sent after a client's notification (a `roots/list` after `initialized`) is
left out over HTTP.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import orjson
from aiohttp import web

from .exchanges import id_key
from .replayer import Replayer

__all__ = ["replay_app", "serve_http"]

PATH = "/mcp"
_Out = list[dict[str, Any]]


class _Front:
    def __init__(self, replayer: Replayer) -> None:
        self.replayer = replayer
        self.streams: dict[str, asyncio.Queue[_Out]] = {}  # our request id → its stream

    async def post(self, request: web.Request) -> web.StreamResponse:
        try:
            message = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            error = {"code": -32700, "message": "Parse error: the body is one JSON-RPC message"}
            return _json({"jsonrpc": "2.0", "id": None, "error": error}, status=400)
        if not isinstance(message, dict):
            return _json(self.replayer.receive(message)[0], status=400)
        if "method" not in message:  # the answer to a request the replay sent on a stream
            out = self.replayer.receive(message)
            stream = self.streams.pop(id_key(message.get("id")), None)
            if stream is not None:
                stream.put_nowait(out)
            return web.Response(status=202)
        if "id" not in message:  # what the server sent after a notification has no stream here
            self.replayer.receive(message)
            return web.Response(status=202)
        out = self.replayer.receive(message)
        headers = {}
        if message["method"] == "initialize":
            headers["Mcp-Session-Id"] = uuid.uuid4().hex
        if len(out) == 1 and _ends(out, message):
            return _json(out[0], headers=headers)
        return await self._stream(request, message, out, headers)

    async def _stream(
        self, request: web.Request, message: dict[str, Any], out: _Out, headers: dict[str, str]
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", **headers}
        )
        await response.prepare(request)
        while True:
            for item in out:
                await response.write(b"event: message\ndata: " + orjson.dumps(item) + b"\n\n")
            if _ends(out, message):
                return response
            last = out[-1] if out else None
            if last is None or "method" not in last or "id" not in last:
                await asyncio.Event().wait()  # never answered while recording: open till it leaves
                return response
            queue: asyncio.Queue[_Out] = asyncio.Queue()
            self.streams[id_key(last["id"])] = queue
            out = await queue.get()


def _ends(out: _Out, message: dict[str, Any]) -> bool:
    return bool(out) and "method" not in out[-1] and out[-1].get("id") == message["id"]


def _json(
    body: dict[str, Any], *, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    return web.Response(
        body=orjson.dumps(body), status=status, content_type="application/json", headers=headers
    )


async def _not_offered(request: web.Request) -> web.Response:
    return web.Response(status=405, headers={"Allow": "POST"})


def replay_app(replayer: Replayer) -> web.Application:
    front = _Front(replayer)
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post(PATH, front.post)
    app.router.add_get(PATH, _not_offered)
    app.router.add_delete(PATH, _ended)
    return app


async def _ended(request: web.Request) -> web.Response:
    return web.Response(status=200)  # the session ends; the cassette stays as it was


def serve_http(replayer: Replayer, host: str, port: int) -> None:
    web.run_app(
        replay_app(replayer),
        host=host,
        port=port,
        print=None,
        handler_cancellation=True,
        shutdown_timeout=1.0,
    )
