"""EXPERIMENT ONLY (not a supported configuration): bench_server.py with hot-path variants, to
price the profile's suggestions before anyone changes src/. Uses mcpkit private internals.

    --no-proxy-headers   uvicorn.Config(proxy_headers=False): no ProxyHeadersMiddleware per request
    --no-watcher         HTTP: no per-request `_cancel_on_disconnect` task (loses TR-HTTP-23/24!)
    --inline             stdio: run each request inline until it first suspends; a Task only if
                         it does (what Python 3.12's eager_task_factory does natively)
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench_server import build  # noqa: E402

from mcpkit.protocol.errors import InternalError, MCPError  # noqa: E402
from mcpkit.protocol.jsonrpc import encode_error, encode_result  # noqa: E402
from mcpkit.transports import http as mk_http  # noqa: E402
from mcpkit.transports import stdio as mk_stdio  # noqa: E402


class NoWatcherApp(mk_http.StreamableHTTPApp):
    async def _answer(self, msg: Any, meta: Any, receive: Any, send: Any) -> None:
        responder = mk_http._Responder(send)
        try:
            result = await self.server.handle(msg, meta, responder.emit)
            body, status = encode_result(msg.id, result), 200
        except MCPError as exc:
            body, status = encode_error(msg.id, exc), exc.http_status
        except Exception:
            body, status = encode_error(msg.id, InternalError()), 200
        await responder.finish(body, 200 if responder.streaming else status)


class _Resume:
    """Continue a coroutine that already ran its first step, inside a Task."""

    __slots__ = ("coro", "first")

    def __init__(self, coro: Any, first: Any) -> None:
        self.coro, self.first = coro, first

    def __await__(self) -> Any:
        coro, to_yield = self.coro, self.first
        while True:
            try:
                sent = yield to_yield
            except BaseException as exc:  # noqa: BLE001 - forwarded into the coroutine
                try:
                    to_yield = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    to_yield = coro.send(sent)
                except StopIteration as stop:
                    return stop.value


class InlineStdio(mk_stdio.StdioConnection):
    async def _emit(self, method: str, params: dict[str, Any]) -> None:
        self.write(mk_stdio.jsonrpc.encode_notification(method, params))

    def receive(self, line: bytes) -> None:
        try:
            msg = mk_stdio.jsonrpc.decode(line)
        except MCPError as exc:
            self.write(encode_error(mk_stdio.jsonrpc.request_id_of(exc), exc))
            return
        if type(msg) is not mk_stdio.Request or msg.method == "subscriptions/listen" or msg.id in self.tasks:
            super().receive(line)  # the rare paths: unchanged
            return
        coro = self.server.answer(msg, self._emit)
        try:
            first = coro.send(None)
        except StopIteration as stop:
            self.write(stop.value)  # finished without suspending: no Task at all
            return
        task = asyncio.get_running_loop().create_task(self._rest(coro, first))
        self.tasks[msg.id] = task
        task.add_done_callback(lambda _t, rid=msg.id: self.tasks.pop(rid, None))

    async def _rest(self, coro: Any, first: Any) -> None:
        try:
            self.write(await _Resume(coro, first))
        except asyncio.CancelledError:
            pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--transport", choices=["http", "stdio"], default="http")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--tools", type=int, default=2)
    ap.add_argument("--no-proxy-headers", action="store_true")
    ap.add_argument("--no-watcher", action="store_true")
    ap.add_argument("--inline", action="store_true")
    a = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    server = build(a.tools)
    if a.transport == "stdio":
        if a.inline:
            mk_stdio.StdioConnection = InlineStdio  # type: ignore[misc]
        server.run("stdio")
        return
    import uvicorn

    app = (NoWatcherApp if a.no_watcher else mk_http.StreamableHTTPApp)(server)
    uvicorn.run(app, host="127.0.0.1", port=a.port, loop="uvloop", http="httptools",
                access_log=False, log_level="warning", lifespan="on",
                proxy_headers=not a.no_proxy_headers)


if __name__ == "__main__":
    main()
