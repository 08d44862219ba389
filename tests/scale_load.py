"""Mixed load through one URL (nginx in front of the instances of `scale_server.py`), kept up
while the test stops instances and restarts Redis, and what it saw: every request's outcome,
every task's end, every listen stream's changes.

A request's outcome is `ok`, a *declared* one (the design says it happens, and what the
client does about it), or a failure:

- `503 -31004` (StoreUnavailable: Redis restarting): retried after its Retry-After.
- `503 -31000` (ServerBusy: an instance draining, when no other took the request): retried.
- `404 session` (a 2025-11-25 session whose instance stopped): the client initializes again.

A listen stream that ends with its result (SUB-11: the instance drains) is opened again; one
that ends without it would be a failure (SUB-13), and is counted as one.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

from mcpkit.protocol.tasks import TASKS_EXTENSION, TERMINAL
from support import (
    LEGACY_HEADERS,
    headers_for,
    legacy_initialize,
    meta,
    parse_body,
    rpc,
    scaled,
)

TASKS = {"extensions": {TASKS_EXTENSION: {}}}
WITH_INPUT = {**TASKS, "elicitation": {}}
ANN = {"name": {"action": "accept", "content": {"name": "Ann"}}}


class Failed(Exception):
    """An outcome the design does not declare."""


@dataclass
class StreamLog:
    """One listen stream: when it was acknowledged and ended (loop time), what it carried."""

    opened: float
    ended: float | None = None
    graceful: bool = False
    changes: set[int] = field(default_factory=set)


@dataclass
class Change:
    number: int
    start: float
    end: float


class Load:
    def __init__(self, url: str) -> None:
        self.url = url + "/mcp"
        self.loop = asyncio.get_running_loop()
        self.stopping = asyncio.Event()
        self.counts: Counter[str] = Counter()
        self.declared: Counter[str] = Counter()
        self.failures: list[str] = []
        self.tasks: dict[str, str] = {}  # task id -> last status seen
        self.streams: list[list[StreamLog]] = []
        self.changes: list[Change] = []
        self.heard = asyncio.Condition()
        self._ids = itertools.count(1)

    # -- requests ------------------------------------------------------------------------------
    async def modern(
        self, s: aiohttp.ClientSession, method: str, caps: Any = None, **params: Any
    ) -> dict[str, Any]:
        """The result of one modern request, retried where the design says so."""
        message = rpc(method, params, id=next(self._ids))
        message["params"]["_meta"] = meta(caps or {})
        body, headers = orjson.dumps(message), headers_for(message)
        while True:
            async with s.post(self.url, data=body, headers=headers) as r:
                data = await r.read()
                status, retry_after = r.status, r.headers.get("retry-after")
                ctype = r.headers.get("content-type", "")
            reply = parse_body(ctype, data)
            error = reply[-1].get("error") if reply else None
            if status == 503 and retry_after and error:
                self.declared[f"503 {error['code']} retried"] += 1
                await asyncio.sleep(min(float(retry_after), 0.5))
                continue
            if status != 200 or not reply or error:
                raise Failed(f"{method}: HTTP {status} {data[:300]!r}")
            self.counts[method] += 1
            return reply[-1]["result"]  # type: ignore[no-any-return]

    # -- the workers ---------------------------------------------------------------------------
    async def run(self, worker: Any, *args: Any) -> None:
        """Repeat `worker` until the load stops; a failure is recorded, and the worker goes on."""
        async with aiohttp.ClientSession() as s:
            while not self.stopping.is_set():
                try:
                    await worker(s, *args)
                except (Failed, aiohttp.ClientError, orjson.JSONDecodeError, KeyError) as exc:
                    self.failures.append(f"{worker.__name__}: {exc!r}"[:400])

    async def plain(self, s: aiohttp.ClientSession) -> None:
        n = next(self._ids)
        result = await self.modern(s, "tools/call", name="echo", arguments={"text": f"p{n}"})
        if not result["content"][0]["text"].startswith(f"p{n} from "):
            raise Failed(f"echo answered {result}")

    async def mrtr(self, s: aiohttp.ClientSession) -> None:
        first = await self.modern(s, "tools/call", {"elicitation": {}}, name="greet", arguments={})
        if first.get("resultType") != "input_required":
            raise Failed(f"greet did not ask: {first}")
        done = await self.modern(
            s,
            "tools/call",
            {"elicitation": {}},
            name="greet",
            arguments={},
            inputResponses=ANN,
            requestState=first["requestState"],
        )
        if not done["content"][0]["text"].startswith("Hello, Ann!"):
            raise Failed(f"greet answered {done}")
        self.counts["mrtr rounds"] += 1

    async def task(self, s: aiohttp.ClientSession, tool: str) -> None:
        created = await self.modern(s, "tools/call", WITH_INPUT, name=tool, arguments={})
        task_id = created["taskId"]
        self.tasks[task_id] = created["status"]
        answered = False
        while self.tasks[task_id] not in TERMINAL:
            got = await self.modern(s, "tasks/get", WITH_INPUT, taskId=task_id)
            self.tasks[task_id] = got["status"]
            if got["status"] == "input_required" and not answered:
                await self.modern(s, "tasks/update", WITH_INPUT, taskId=task_id, inputResponses=ANN)
                answered = True
            elif got["status"] not in TERMINAL:
                await asyncio.sleep(0.1)  # the poll interval the server suggests
        if self.tasks[task_id] != "completed":
            raise Failed(f"task {task_id} ended {self.tasks[task_id]}: {got}")

    async def change(self, s: aiohttp.ClientSession) -> None:
        number = len(self.changes) + 1
        start = self.loop.time()
        await self.modern(s, "tools/call", name="change", arguments={"n": number})
        self.changes.append(Change(number, start, self.loop.time()))
        await asyncio.sleep(0.05)

    async def listen(self, s: aiohttp.ClientSession, index: int) -> None:
        """One stream, to its end; the worker loop opens the next."""
        message = rpc(
            "subscriptions/listen",
            {"notifications": {"resourceSubscriptions": ["scale://changes"]}},
            id=f"listen-{index}-{next(self._ids)}",
        )
        message["params"]["_meta"] = meta()
        async with s.post(self.url, data=orjson.dumps(message), headers=headers_for(message)) as r:
            if r.status != 200:
                raise Failed(f"listen: HTTP {r.status} {await r.read()!r}")
            log: StreamLog | None = None
            while True:
                try:
                    event = await r.content.readuntil(b"\n\n")
                except asyncio.IncompleteReadError:
                    if log is not None:
                        log.ended = self.loop.time()
                    raise Failed("listen: the stream ended without its result (SUB-13)") from None
                if not event.startswith(b"data:"):
                    continue  # a keep-alive comment
                note = orjson.loads(event[5:])
                if log is None:  # the acknowledgement (SUB-03)
                    log = StreamLog(self.loop.time())
                    self.streams[index].append(log)
                elif "result" in note:  # the server ended it (SUB-11): open another
                    log.ended, log.graceful = self.loop.time(), True
                    self.declared["listen stream ended by a drain, opened again"] += 1
                    return
                else:
                    log.changes.add(int(note["params"]["uri"].rsplit("/", 1)[1]))
                    async with self.heard:
                        self.heard.notify_all()

    async def legacy(self, s: aiohttp.ClientSession) -> None:
        """A 2025-11-25 session: initialize, then calls in it until it is gone (404)."""
        init = legacy_initialize(client="load")
        session = await self._legacy_post(s, None, init)
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await self._legacy_post(s, session, note)
        while not self.stopping.is_set():
            call = {
                "jsonrpc": "2.0",
                "id": next(self._ids),
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "legacy"}},
            }
            if await self._legacy_post(s, session, call) is None:
                self.declared["404 session gone, initialized again"] += 1
                return
            await asyncio.sleep(0.02)

    async def _legacy_post(
        self, s: aiohttp.ClientSession, session: str | None, message: dict[str, Any]
    ) -> str | None:
        headers = dict(LEGACY_HEADERS)
        if session is not None:
            headers |= {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        while True:
            async with s.post(self.url, data=orjson.dumps(message), headers=headers) as r:
                data = await r.read()
                if r.status == 404 and session is not None:
                    return None
                if r.status == 503 and r.headers.get("retry-after"):
                    self.declared["503 initialize on a draining instance, retried"] += 1
                    await asyncio.sleep(0.2)
                    continue
                if r.status not in (200, 202):
                    raise Failed(f"legacy {message.get('method')}: HTTP {r.status} {data[:200]!r}")
                self.counts["legacy " + str(message.get("method"))] += 1
                return r.headers.get("mcp-session-id", session)

    # -- checks --------------------------------------------------------------------------------
    def _owed(self, log: StreamLog) -> set[int]:
        """Changes a stream must carry: published after its acknowledgement and, when the server
        ended it, at least a second before (what was in flight when a drain ended it may miss
        it: the client's next stream starts after)."""
        end = log.ended - 1.0 if log.ended is not None else float("inf")
        return {c.number for c in self.changes if c.start >= log.opened and c.end <= end}

    def _caught_up(self, log: StreamLog) -> bool:
        return self._owed(log) <= log.changes

    async def settle_listeners(self, seconds: float) -> None:
        """After the load: until every stream still open has every change it is owed (the
        test then closes them: a stream it closed owes every change after its start)."""
        open_logs = [logs[-1] for logs in self.streams if logs and logs[-1].ended is None]
        with contextlib.suppress(TimeoutError):  # then `missed()` says what is missing
            async with self.heard:
                await asyncio.wait_for(
                    self.heard.wait_for(lambda: all(map(self._caught_up, open_logs))),
                    scaled(seconds),
                )

    def missed(self) -> list[str]:
        out = []
        for index, logs in enumerate(self.streams):
            for n, log in enumerate(logs):
                lost = self._owed(log) - log.changes
                if lost:
                    out.append(f"listener {index} stream {n}: missed {sorted(lost)[:10]}")
        return out


def where(task: asyncio.Task[Any]) -> str:
    """What a worker is waiting on: its coroutines, outermost first (for a failure message)."""
    frames, coro = [], task.get_coro()
    while coro is not None and getattr(coro, "cr_frame", None) is not None:
        frames.append(f"{coro.cr_code.co_name}:{coro.cr_frame.f_lineno}")
        coro = coro.cr_await
    return f"{task.get_name()} at " + " > ".join(frames)
