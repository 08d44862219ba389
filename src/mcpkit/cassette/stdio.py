"""`mcpkit replay` over stdio: a line in, the replayer's answer lines out, until stdin ends."""

from __future__ import annotations

import sys
from typing import BinaryIO

import orjson

from .replayer import Replayer

__all__ = ["serve_stdio"]


def serve_stdio(
    replayer: Replayer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> None:
    source = stdin or sys.stdin.buffer
    sink = stdout or sys.stdout.buffer
    try:
        for raw in source:
            if not raw.strip():
                continue
            try:
                message = orjson.loads(raw)
            except orjson.JSONDecodeError:
                out = [_parse_error()]
            else:
                out = replayer.receive(message)
            if out:
                sink.write(b"".join(orjson.dumps(item) + b"\n" for item in out))
                sink.flush()
    except BrokenPipeError:  # the client went away first: nothing left to answer
        pass


def _parse_error() -> dict[str, object]:
    error = {"code": -32700, "message": "Parse error: each line is one JSON-RPC message"}
    return {"jsonrpc": "2.0", "id": None, "error": error}
