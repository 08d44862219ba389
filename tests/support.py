"""Test helpers: build modern requests, drive the ASGI app in-process, record the wire.

Every server-produced message a test sees is recorded (`record`): it is checked at once
against the published schema of its wire (`wire_schemas`), so the test that produced a bad
message is the one that fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import importlib.util
import os
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from mcpkit.protocol.versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
)
from wire_schemas import check

ROOT = Path(__file__).resolve().parent.parent
V = "2026-07-28"

# One factor for every deadline a test waits under (MCPKIT_TEST_SLOWDOWN=3 on a busy machine):
# a deadline only bounds a wait for something that will happen, so a larger one never hides a
# bug, it only gives a loaded machine room. Timeouts the test *expects* to fire stay as written.
SLOWDOWN = max(1.0, float(os.environ.get("MCPKIT_TEST_SLOWDOWN", "1") or 1))


def scaled(seconds: float) -> float:
    """`seconds` of deadline, scaled by MCPKIT_TEST_SLOWDOWN (>= 1)."""
    return seconds * SLOWDOWN


@contextlib.contextmanager
def cache_lock(directory: Path) -> Iterator[None]:
    """Hold `directory`'s install lock (created if need be): the suite's workers (pytest -n)
    and anything else installing into the same cache take turns, and each re-checks, once it
    holds the lock, whether another already installed what it needs."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


def default_sigint() -> None:
    """`preexec_fn` of a child that must see Ctrl-C: SIGINT back to its default action (a suite
    started in the background, or a test before, may leave it ignored, and ignored signals stay
    ignored across exec)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def record(method: str, message: dict[str, Any], era: str = V) -> None:
    """A message the server sent, in answer to `method` (or of its own): valid `era` wire,
    or the test fails here."""
    check(era, method, message)


def load_everything_server() -> Any:
    name = "everything_server"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, ROOT / "tests/conformance/everything_server.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def meta(caps: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    m: dict[str, Any] = {
        META_PROTOCOL_VERSION: V,
        META_CLIENT_CAPABILITIES: caps if caps is not None else {},
        META_CLIENT_INFO: {"name": "tests", "version": "0"},
    }
    m.update(extra)
    return m


def rpc(
    method: str,
    params: dict[str, Any] | None = None,
    id: Any = 1,
    *,
    with_meta: bool = True,
    **meta_extra: Any,
) -> dict[str, Any]:
    p = dict(params or {})
    if with_meta:
        p["_meta"] = meta(**meta_extra)
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": p}


#: The headers of a 2025-11-25 POST (no session yet).
LEGACY_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}


def legacy_initialize(id: int = 0, client: str = "tests") -> dict[str, Any]:
    """A 2025-11-25 `initialize` request."""
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": client, "version": "0"},
        },
    }


def headers_for(message: dict[str, Any]) -> dict[str, str]:
    method = message.get("method", "")
    h = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": V,
        "mcp-method": method,
        "host": "127.0.0.1:8000",
    }
    params = message.get("params") or {}
    if method in ("tools/call", "prompts/get"):
        h["mcp-name"] = str(params.get("name"))
    elif method == "resources/read":
        h["mcp-name"] = str(params.get("uri"))
    elif method.startswith("tasks/"):
        h["mcp-name"] = str(params.get("taskId"))
    return h


def parse_body(content_type: str, body: bytes) -> list[dict[str, Any]]:
    if content_type.startswith("text/event-stream"):
        out = []
        for event in body.split(b"\n\n"):
            data = b"\n".join(
                line[5:].lstrip() for line in event.split(b"\n") if line.startswith(b"data:")
            )
            if data:
                out.append(orjson.loads(data))
        return out
    if content_type.startswith("application/json") and body:
        return [orjson.loads(body)]
    return []


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def json(self) -> dict[str, Any]:
        return self.messages[-1]

    @property
    def code(self) -> int | None:
        err = self.json.get("error")
        return err["code"] if err else None

    @property
    def result(self) -> Any:
        return self.json["result"]


class AsgiClient:
    """Drives an ASGI app without sockets."""

    def __init__(self, app: Any, era: str = V) -> None:
        self.app = app
        #: The wire its answers are checked against (a 2025-11-25 session's: "2025-11-25").
        self.era = era

    async def post(
        self,
        message: Any,
        headers: dict[str, str] | None = None,
        *,
        raw: bytes | None = None,
        http_method: str = "POST",
        path: str = "/mcp",
    ) -> Reply:
        hdrs = (
            headers
            if headers is not None
            else headers_for(message if isinstance(message, dict) else {})
        )
        body = raw if raw is not None else orjson.dumps(message)
        chunks: list[bytes] = []
        start: dict[str, Any] = {}
        receive = Receive(body)

        async def send(msg: dict[str, Any]) -> None:
            if msg["type"] == "http.response.start":
                start.update(msg)
            else:
                chunks.append(msg.get("body", b""))

        scope = asgi_scope(http_method, path, hdrs, len(body))
        await self.app(scope, receive, send)
        receive.disconnect.set()
        resp_headers = {k.decode(): v.decode() for k, v in start.get("headers", [])}
        data = b"".join(chunks)
        messages = parse_body(resp_headers.get("content-type", ""), data) if data else []
        method = message.get("method", "?") if isinstance(message, dict) else "?"
        # OAuth answers are not JSON-RPC: auth challenges (RFC 6750 error bodies with a
        # WWW-Authenticate header) and the protected resource metadata document (RFC 9728).
        oauth = "www-authenticate" in resp_headers or path.startswith("/.well-known/")
        for m in messages if not oauth else ():
            record(method, m, self.era)
        return Reply(start["status"], resp_headers, data, messages)

    @contextlib.asynccontextmanager
    async def stream(
        self, message: dict[str, Any], headers: dict[str, str] | None = None
    ) -> AsyncIterator[Stream]:
        """Open a long-lived POST (listen, slow tools); closing the block disconnects."""
        hdrs = headers if headers is not None else headers_for(message)
        body = orjson.dumps(message)
        stream = Stream(message.get("method", "?"), self.era)
        receive = Receive(body)
        task = asyncio.create_task(
            self.app(asgi_scope("POST", "/mcp", hdrs, len(body)), receive, stream.send)
        )
        try:
            yield stream
        finally:
            receive.disconnect.set()
            await asyncio.wait_for(task, scaled(5))
            stream.task_done = True


class Stream:
    def __init__(self, method: str, era: str = V) -> None:
        self.method = method
        self.era = era
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.queue: asyncio.Queue[dict[str, Any] | bytes | None] = asyncio.Queue()
        self.buffer = b""
        self.task_done = False
        self.ended = False

    async def send(self, msg: dict[str, Any]) -> None:
        if msg["type"] == "http.response.start":
            self.status = msg["status"]
            self.headers = {k.decode(): v.decode() for k, v in msg["headers"]}
            return
        self.buffer += msg.get("body", b"")
        while b"\n\n" in self.buffer:
            event, self.buffer = self.buffer.split(b"\n\n", 1)
            if event.startswith(b":"):
                await self.queue.put(event)
                continue
            data = b"\n".join(
                line[5:].lstrip() for line in event.split(b"\n") if line.startswith(b"data:")
            )
            if data:
                m = orjson.loads(data)
                record(self.method, m, self.era)
                await self.queue.put(m)
        if not msg.get("more_body"):
            if self.buffer.strip() and not self.headers.get("content-type", "").startswith(
                "text/event-stream"
            ):
                m = orjson.loads(self.buffer)
                record(self.method, m, self.era)
                await self.queue.put(m)
            self.ended = True
            await self.queue.put(None)

    async def next(self, timeout: float = 5.0) -> dict[str, Any] | bytes | None:
        return await asyncio.wait_for(self.queue.get(), scaled(timeout))


class Receive:
    """The ASGI `receive` of one request: the whole body, then `http.disconnect` once
    `disconnect` is set (the client went away)."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.sent = False
        self.disconnect = asyncio.Event()

    async def __call__(self) -> dict[str, Any]:
        if not self.sent:
            self.sent = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.disconnect.wait()
        return {"type": "http.disconnect"}


async def post(
    session: aiohttp.ClientSession,
    url: str,
    message: dict[str, Any],
    headers: dict[str, str] | None = None,
) -> tuple[int, list[dict[str, Any]]]:
    """POST one message to a real server at `url` (its endpoint at /mcp); the status and the
    messages of the answer, each recorded."""
    hdrs = headers or headers_for(message)
    hdrs.pop("host", None)
    async with session.post(url + "/mcp", data=orjson.dumps(message), headers=hdrs) as resp:
        body = await resp.read()
        msgs = parse_body(resp.headers.get("content-type", ""), body)
        for m in msgs:
            record(message["method"], m)
        return resp.status, msgs


def asgi_scope(method: str, path: str, headers: dict[str, str], length: int) -> dict[str, Any]:
    raw = [(k.lower().encode(), v.encode("utf-8")) for k, v in headers.items()]
    if "content-length" not in {k.lower() for k in headers}:
        raw.append((b"content-length", str(length).encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": raw,
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }


async def until(server: Any, task_id: str, check: Callable[[Any], bool]) -> Any:
    """Wait for a change of the task that makes `check` true (the store reports every one)."""
    record = server.tasks.get(task_id, None)
    assert record is not None
    if check(record):
        return record
    reached: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    previous = server.tasks.on_change

    def hook(changed: Any) -> None:
        previous(changed)
        if changed is record and check(changed) and not reached.done():
            reached.set_result(changed)

    server.tasks.on_change = hook
    try:
        return await asyncio.wait_for(reached, scaled(5))
    finally:
        server.tasks.on_change = previous


async def ask(server: Any, method: str, params: dict[str, Any] | None = None) -> Any:
    """One modern request to `server` over the memory transport: its result, or its error."""
    from mcpkit.server.transports.memory import MemoryTransport

    p = dict(params or {})
    p["_meta"] = meta()
    resp = await MemoryTransport(server, trace=record).request(1, method, p)
    return resp.result if resp.error is None else resp.error


def text_of(result: dict[str, Any]) -> str:
    """The text blocks of a tool result, joined."""
    return " ".join(c["text"] for c in result["content"] if c.get("type") == "text")


async def first_step() -> None:
    """Let the tasks created just before run to their first suspension (a request written and
    waiting for its answer): the loop runs ready callbacks in order, so one turn is enough. A
    yield, not a wait: no time passes."""
    await asyncio.sleep(0)


def free_port() -> int:
    """A loopback port free right now (another process may still take it first)."""

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def wait_port(port: int, proc: asyncio.subprocess.Process, seconds: float = 20) -> None:
    """Until `proc` accepts connections on `port` (no readiness line to read)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + scaled(seconds)
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            if proc.returncode is not None or loop.time() > deadline:
                raise RuntimeError(f"nothing listens on {port}") from None
            await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def redis_server() -> AsyncIterator[str]:
    """A real redis-server of this test's own (free port, no persistence): its URL."""
    import shutil

    exe = shutil.which("redis-server")
    assert exe is not None, "redis-server is required (apt-get install redis-server)"
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        exe,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    out = proc.stdout
    drain: asyncio.Task[bytes] | None = None
    try:
        while True:  # its readiness line, not a timed wait
            line = await asyncio.wait_for(out.readline(), scaled(20))
            if not line:
                raise RuntimeError(f"redis-server on port {port} did not start")
            if b"Ready to accept connections" in line:
                break
        drain = asyncio.create_task(out.read())  # keep its log pipe from filling up
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        await proc.wait()
        if drain is not None:
            await drain
