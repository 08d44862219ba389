"""In-process per-request cost of mcpkit's own code (no sockets, no uvicorn): microseconds per
call of the ASGI app and of the stdio path, and of their pieces. Robust to machine noise
because it is pure CPU in one process (best of --rounds).

    /work/main/.venv/bin/python bench/micro.py [-n 20000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from typing import Any

import orjson
import uvloop

from bench_server import build

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "mcpbench", "version": "1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def body(i: int) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                         "params": {"name": "echo", "arguments": {"text": f"hello world {i}"},
                                    "_meta": META}})


HEADERS = [(b"host", b"127.0.0.1:18000"), (b"content-type", b"application/json"),
           (b"accept", b"application/json, text/event-stream"),
           (b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call"),
           (b"mcp-name", b"echo"), (b"content-length", b"250")]


async def bench_asgi(app: Any, bodies: list[bytes]) -> float:
    loop = asyncio.get_running_loop()
    never = loop.create_future()
    sent: list[Any] = []

    async def send(m: Any) -> None:
        sent.append(m)

    t0 = time.perf_counter()
    for b in bodies:
        msgs = [{"type": "http.request", "body": b, "more_body": False}]

        async def receive() -> Any:
            if msgs:
                return msgs.pop()
            await never  # like uvicorn: blocks until disconnect
            return {"type": "http.disconnect"}

        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": HEADERS}
        await app(scope, receive, send)
        sent.clear()
    dt = time.perf_counter() - t0
    await asyncio.sleep(0)  # let cancelled watchers finish
    return dt


async def bench_coro(fn: Any, args_list: list[Any]) -> float:
    t0 = time.perf_counter()
    for a in args_list:
        await fn(*a)
    return time.perf_counter() - t0


def bench_sync(fn: Any, args_list: list[Any]) -> float:
    t0 = time.perf_counter()
    for a in args_list:
        fn(*a)
    return time.perf_counter() - t0


async def amain(n: int, rounds: int) -> None:
    from mcpkit.protocol import jsonrpc
    from mcpkit.server.transports.http import StreamableHTTPApp

    server = build(2)
    bodies = [body(i) for i in range(n)]
    msgs = [jsonrpc.decode(b) for b in bodies]
    front_door = hasattr(server, "admit")  # this script also measures commits before it
    if front_door:
        requests = [server.admit(b) for b in bodies]
    else:
        metas = [server.read_meta(m.params) for m in msgs]
    tool = server.tools["echo"]
    results: dict[str, list[float]] = {}

    def rec(name: str, seconds: float) -> None:
        results.setdefault(name, []).append(seconds / n * 1e6)

    try:
        import sys, os
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "experiments"))
        from exp_server import NoWatcherApp  # type: ignore[import-not-found]
    except Exception:  # noqa: BLE001
        NoWatcherApp = None  # type: ignore[assignment,misc]

    # As serve_http builds it: there the server times request bodies out, not the app.
    app = StreamableHTTPApp(server, body_timeout=None) if front_door else StreamableHTTPApp(server)
    with_mw = build(2)

    async def no_op(call: Any, call_next: Any) -> Any:
        return await call_next(call)

    with_mw.add_middleware(no_op)
    traced = _traced_server() if front_door else None
    traced_app = StreamableHTTPApp(traced, body_timeout=None) if traced is not None else None
    gc.collect()
    for _ in range(rounds):
        rec("ASGI app, whole request (HTTP path)", await bench_asgi(app, bodies))
        if NoWatcherApp is not None:
            rec("  same without the disconnect-watcher task", await bench_asgi(NoWatcherApp(server), bodies))
        if traced_app is not None:
            rec("  same, tracing on (batch exporter to nothing)", await bench_asgi(traced_app, bodies))
        if front_door:
            from mcpkit.server.admission import admit

            async def stdio_path(line: bytes) -> bytes:  # what StdioConnection.receive calls
                return await server.answer(admit(server, line, None, None, None, None))

            rec("stdio path: line in, response bytes out", await bench_coro(stdio_path, [(b,) for b in bodies]))
            if traced is not None:
                async def traced_path(line: bytes) -> bytes:
                    return await traced.answer(admit(traced, line, None, None, None, None))

                rec("  same (stdio), tracing on (batch exporter to nothing)", await bench_coro(traced_path, [(b,) for b in bodies]))
            rec("  Server.admit (decode, era, _meta, version, shape)", bench_sync(server.admit, [(b,) for b in bodies]))
            rec("    jsonrpc.decode (orjson.loads + parse)", bench_sync(jsonrpc.decode, [(b,) for b in bodies]))
            from mcpkit.protocol.shapes import shapes_for
            shape = shapes_for("2026-07-28")
            rec("    Shapes.check_request (jsonschema-rs)", bench_sync(shape.check_request, [("tools/call", m.params) for m in msgs]))
            rec("  Server.answer (handle + encode)", await bench_coro(server.answer, [(r,) for r in requests]))
            rec("  Server.handle (tools/call)", await bench_coro(server.handle, [(r,) for r in requests]))
            mw_requests = [with_mw.admit(b) for b in bodies]
            rec("  Server.handle (tools/call), one no-op middleware", await bench_coro(with_mw.handle, [(r,) for r in mw_requests]))
        else:
            async def stdio_path(line: bytes) -> bytes:
                return await server.answer(jsonrpc.decode(line), None)

            rec("stdio path: line in, response bytes out", await bench_coro(stdio_path, [(b,) for b in bodies]))
            rec("    jsonrpc.decode (orjson.loads + parse)", bench_sync(jsonrpc.decode, [(b,) for b in bodies]))
            rec("  Server.answer (_meta, version, handle, encode)", await bench_coro(server.answer, [(m, None) for m in msgs]))
            rec("    Server.read_meta", bench_sync(server.read_meta, [(m.params,) for m in msgs]))
            rec("  Server.handle (tools/call)", await bench_coro(server.handle, list(zip(msgs, metas, [None] * n))))
            rec("  Server.handle (tools/call), one no-op middleware", await bench_coro(with_mw.handle, list(zip(msgs, metas, [None] * n))))
        rec("    Tool.call", await bench_coro(tool.call, [(m.params["arguments"], None) for m in msgs]))
        rec("      Signature.validate (pydantic)", bench_sync(tool.signature.validate, [(m.params["arguments"],) for m in msgs]))
        rec("  encode_result (orjson)", bench_sync(jsonrpc.encode_result, [(m.id, {"resultType": "complete", "content": [{"type": "text", "text": "x"}]}) for m in msgs]))
        loop = asyncio.get_running_loop()

        async def nothing() -> None:
            return None

        def task_roundtrip(_: Any) -> None:
            loop.create_task(nothing())

        t0 = time.perf_counter()
        for i in range(n):
            task_roundtrip(i)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        rec("create_task + run an empty coroutine (reference)", time.perf_counter() - t0)
    print(f"µs per call, best of {rounds} rounds of {n} (python {__import__('sys').version.split()[0]}, uvloop)")
    for name, v in results.items():
        print(f"  {min(v):7.2f}  {name}")


def _traced_server() -> Any:
    """The bench server with telemetry on: spans batched to an exporter that drops them,
    metrics recorded (exported every minute to nowhere). None without OpenTelemetry."""
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import MetricExporter, PeriodicExportingMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
        from mcpkit.telemetry import Telemetry
    except ImportError:
        return None

    class Nowhere(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    class NoMetrics(MetricExporter):
        def export(self, metrics_data: Any, timeout_millis: float = 0, **kw: Any) -> Any:
            from opentelemetry.sdk.metrics.export import MetricExportResult

            return MetricExportResult.SUCCESS

        def force_flush(self, timeout_millis: float = 0) -> bool:
            return True

        def shutdown(self, timeout_millis: float = 0, **kw: Any) -> None:
            return None

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(Nowhere()))
    reader = PeriodicExportingMetricReader(NoMetrics(), export_interval_millis=60_000)
    telemetry = Telemetry(tracer_provider, MeterProvider(metric_readers=[reader]))
    server = build(2)
    from mcpkit import Server

    traced = Server("mcpkit-bench", telemetry=telemetry)
    traced.tools = server.tools
    return traced


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    uvloop.run(amain(a.n, a.rounds))


if __name__ == "__main__":
    main()
