"""A bare 2025-11-25 stdio server written by hand, the way many published servers behave: it
answers `initialize`, `tools/list` and `tools/call`, refuses everything else (so the client
picks the legacy era), and announces no change stream. Its exit is noticed only by watching
the process. Like many such servers, it logs unasked: `tools/call` sends a debug and an info
`notifications/message` first (it declares no `logging`, so nobody can set its level)."""

from __future__ import annotations

import json
import sys

TOOL = {
    "name": "ping",
    "description": "Answer pong.",
    "inputSchema": {"type": "object", "properties": {}},
    "annotations": {"readOnlyHint": True, "openWorldHint": False},
}


def answer(request: dict[str, object]) -> dict[str, object] | None:
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        return None  # a notification
    if method == "initialize":
        result: object = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "legacy-line", "version": "1.0"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "pong"}]}
    elif method == "ping":
        result = {}
    else:
        error = {"code": -32601, "message": f"method not found: {method}"}
        return {"jsonrpc": "2.0", "id": rid, "error": error}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def log(level: str, text: str) -> None:
    note = {"level": level, "logger": "legacy", "data": text}
    sys.stdout.write(
        json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": note})
    )
    sys.stdout.write("\n")


for line in sys.stdin:
    if line.strip():
        request = json.loads(line)
        if request.get("method") == "tools/call":
            log("debug", "looking up pong")
            log("info", "answering pong")
        reply = answer(request)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
