"""The fuzz suite's targets: fuzz_server.py over stdio and over HTTP, in either era."""

from __future__ import annotations

import json
import queue
import socket
import subprocess
import sys
import threading
import time
from typing import Any

from fuzzing import (
    DEADLINE,
    INITIALIZE,
    LEGACY,
    MODERN,
    SERVER,
    OracleFailure,
    Target,
    answer_for,
    canary_body,
    expects_answer,
    retag,
)
from support import scaled


class StdioTarget(Target):
    """One process on pipes; in the LEGACY era, its session opened first."""

    def __init__(self, era: str, *, plant: bool = False) -> None:
        super().__init__(plant=plant)
        self.era = era
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()

    def start(self) -> None:
        args = [sys.executable, str(SERVER), "stdio"] + (["--plant"] if self.plant else [])
        self.process = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.inbox = queue.Queue()
        threading.Thread(target=self._read, args=(self.process, self.inbox), daemon=True).start()
        threading.Thread(target=self.log.follow, args=(self.process.stderr,), daemon=True).start()
        if self.era == LEGACY:
            self._write(json.dumps(INITIALIZE).encode())
            self._wait({"init"})
            self._write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def _read(self, process: subprocess.Popen[bytes], inbox: queue.Queue[Any]) -> None:
        assert process.stdout is not None
        for line in iter(process.stdout.readline, b""):
            try:
                message = json.loads(line)
            except ValueError as exc:
                inbox.put({"_bad_line": line[:200], "_error": str(exc)})
                continue
            if isinstance(message, dict) and "method" in message and "id" in message:
                self._write(json.dumps(answer_for(message)).encode())  # a session's question
                continue
            inbox.put(message)

    def _write(self, line: bytes) -> None:
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write(line + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # the process died: the verdict says so

    def _wait(self, ids: set[Any]) -> None:
        """Until every id is answered (a listen: acknowledged, then cancelled)."""
        end = time.monotonic() + DEADLINE
        while ids:
            left = end - time.monotonic()
            if left <= 0 or not self.alive():
                break
            try:
                message = self.inbox.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            if "_bad_line" in message:
                raise OracleFailure(f"stdout carried a line that is not JSON: {message}")
            rid = message.get("id")
            params = message.get("params")
            if rid is None and isinstance(params, dict):  # a listen's acknowledgement
                meta = params.get("_meta")
                rid = meta.get("io.modelcontextprotocol/subscriptionId") if meta else None
                if rid in ids and message.get("method", "").endswith("acknowledged"):
                    self._write(
                        json.dumps(
                            {
                                "jsonrpc": "2.0",
                                "method": "notifications/cancelled",
                                "params": {"requestId": rid},
                            }
                        ).encode()
                    )
                else:
                    rid = None
            ids.discard(rid)
        if ids and self.alive():
            raise OracleFailure(f"no answer within {DEADLINE} s to {sorted(map(str, ids))}")

    def send(self, batch: list[tuple[bytes, dict[str, str]]]) -> None:
        waiting = set()
        for body, _ in batch:
            if expects_answer(body) is not None:
                rid = self.next_id()
                body = retag(body, rid)
                waiting.add(rid)
            self._write(body)
        self._wait(waiting)

    def canary(self) -> None:
        rid = self.next_id()
        self._write(canary_body(rid, self.era))
        self._wait({rid})


class HttpTarget(Target):
    """uvicorn on a free port; in the LEGACY era every message goes to one session."""

    def __init__(self, era: str) -> None:
        super().__init__()
        self.era = era
        self.port = 0
        self.session_id: str | None = None

    def start(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), "http", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        threading.Thread(target=self.log.follow, args=(self.process.stderr,), daemon=True).start()
        end = time.monotonic() + scaled(20)
        while True:  # readiness: the port accepts connections
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if not self.alive() or time.monotonic() > end:
                    raise RuntimeError("the fuzz server did not start") from None
                time.sleep(0.05)
        self.session_id = None
        if self.era == LEGACY:
            self.open_session()

    def open_session(self) -> None:
        headers = {"content-type": "application/json", "accept": "application/json"}
        status, reply_headers, _ = self.post(json.dumps(INITIALIZE).encode(), headers)
        assert status == 200, status
        self.session_id = reply_headers["mcp-session-id"]
        note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        self.post(note, self._session_headers(headers))

    def _session_headers(self, headers: dict[str, str]) -> dict[str, str]:
        if self.session_id is None:
            return headers
        return {"mcp-session-id": self.session_id, "mcp-protocol-version": LEGACY, **headers}

    def post(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        """One POST on its own connection: status, headers, body (an SSE stream is read to
        its end, answering the session's questions; a listen's to its acknowledgement)."""
        head = f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{self.port}\r\nconnection: close\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        head += f"content-length: {len(body)}\r\n\r\n"
        with socket.create_connection(("127.0.0.1", self.port), timeout=DEADLINE) as conn:
            conn.sendall(head.encode() + body)
            data = b""
            end = time.monotonic() + DEADLINE
            while b"\r\n\r\n" not in data:
                data += self._recv(conn, end)
            raw_head, _, rest = data.partition(b"\r\n\r\n")
            lines = raw_head.decode("latin-1").split("\r\n")
            status = int(lines[0].split(" ")[1])
            reply_headers = {
                k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])
            }
            if reply_headers.get("content-type", "").startswith("text/event-stream"):
                return status, reply_headers, self._events(conn, rest, end)
            while True:
                chunk = self._recv(conn, end, eof_ok=True)
                if not chunk:
                    return status, reply_headers, rest
                rest += chunk

    def _recv(self, conn: socket.socket, end: float, *, eof_ok: bool = False) -> bytes:
        left = end - time.monotonic()
        if left <= 0:
            raise OracleFailure(f"no answer within {DEADLINE} s")
        conn.settimeout(left)
        try:
            chunk = conn.recv(65536)
        except TimeoutError:
            raise OracleFailure(f"no answer within {DEADLINE} s") from None
        except ConnectionResetError:
            chunk = b""
        if not chunk and not eof_ok:
            raise OracleFailure("the server closed the connection without an answer")
        return chunk

    def _events(self, conn: socket.socket, buffer: bytes, end: float) -> bytes:
        seen = b""
        while True:
            while b"\n\n" in buffer:
                event, buffer = buffer.split(b"\n\n", 1)
                seen += event + b"\n\n"
                data = b"\n".join(
                    ln[5:].strip() for ln in event.split(b"\n") if ln.startswith(b"data:")
                )
                message = json.loads(data) if data.strip() else None
                if not isinstance(message, dict):
                    continue
                if "method" in message and "id" in message:  # a session asks its client
                    answer = json.dumps(answer_for(message)).encode()
                    self.post(answer, self._session_headers({"content-type": "application/json"}))
                elif message.get("method", "").endswith("subscriptions/acknowledged"):
                    return seen  # a listen: acknowledged; closing it ends it
            chunk = self._recv(conn, end, eof_ok=True)
            if not chunk:
                return seen
            buffer += chunk

    def send(self, batch: list[tuple[bytes, dict[str, str]]]) -> None:
        for body, headers in batch:
            if expects_answer(body) is not None:
                body = retag(body, self.next_id())
            if self.era == LEGACY and "mcp-session-id" not in headers:
                headers = self._session_headers(headers)
            status, _, reply = self.post(body, headers)
            if status >= 500 and status != 503:
                raise OracleFailure(f"HTTP {status} for {body[:200]!r}: {reply[:300]!r}")
            if status == 404 and self.era == LEGACY and b"Session not found" in reply:
                self.open_session()  # a fuzzed DELETE-like ending: start again

    def canary(self) -> None:
        body = canary_body(self.next_id(), self.era)
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        if self.era == MODERN:
            headers.update(
                {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "echo"}
            )
        status, _, reply = self.post(body, self._session_headers(headers))
        if status != 200 or b"canary" not in reply:
            raise OracleFailure(f"the canary got HTTP {status}: {reply[:300]!r}")
