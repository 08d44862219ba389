"""A scripted stdio MCP server for the client and CLI tests (no tests in here).

Run as `python tests/test_client_fake_server.py`. Stdlib only, so it does not depend on
`mcpkit.server`. It records received notifications on stderr as `got <method> <params>`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOLS = [
    {
        "name": "add",
        "description": "Add two numbers.\nSecond line.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {}}}},
]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(rid: Any, body: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", **body}})


def error(rid: Any, code: int, message: str) -> None:
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def text(value: str, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": is_error}


def call_tool(rid: Any, params: dict[str, Any]) -> None:
    name, args = params.get("name"), params.get("arguments") or {}
    if name == "add":
        token = (params.get("_meta") or {}).get("progressToken")
        if token is not None:
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1, "total": 2},
                }
            )
        result(rid, text(str(args["a"] + args["b"])))
    elif name == "echo":
        result(rid, {**text(json.dumps(args)), "structuredContent": args})
    elif name == "meta":
        result(rid, text(json.dumps(params.get("_meta"))))
    elif name == "fail":
        result(rid, text("it broke", is_error=True))
    elif name == "sleep":
        pass  # never answers: the client has to time out or cancel
    elif name == "die":
        sys.stderr.write("dying now\n")
        sys.stderr.flush()
        sys.exit(3)
    elif name == "odd":
        result(rid, {"resultType": "strange"})
    else:
        error(rid, -32602, f"Unknown tool: {name}")


def handle(msg: dict[str, Any]) -> None:
    method, params, rid = msg.get("method"), msg.get("params") or {}, msg.get("id")
    if "id" not in msg:
        sys.stderr.write(f"got {method} {json.dumps(params)}\n")
        sys.stderr.flush()
    elif method == "server/discover":
        result(
            rid,
            {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}, "prompts": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "9.9"}},
                "instructions": "Be nice.",
            },
        )
    elif method == "tools/list":
        if params.get("cursor") == "page2":
            result(rid, {"tools": TOOLS[1:]})
        else:
            result(rid, {"tools": TOOLS[:1], "nextCursor": "page2"})
    elif method == "tools/call":
        call_tool(rid, params)
    elif method == "prompts/list":
        result(
            rid, {"prompts": [{"name": "greet", "arguments": [{"name": "who", "required": True}]}]}
        )
    elif method == "resources/list":
        result(rid, {"resources": [{"uri": "mem://a", "name": "a", "mimeType": "text/plain"}]})
    elif method == "resources/templates/list":
        result(rid, {"resourceTemplates": [{"uriTemplate": "mem://{x}", "name": "x"}]})
    else:
        error(rid, -32601, f"Method not found: {method}")


def main() -> None:
    if "--ignore-eof" in sys.argv:
        import signal

        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin:
        if line.strip():
            handle(json.loads(line))
    if "--ignore-eof" in sys.argv:
        import time

        time.sleep(60)


if __name__ == "__main__":
    main()
