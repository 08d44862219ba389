"""A hand-written 2025-11-25 stdio server with the habits of published npm servers, each
switched on by an argument (with none it is a plain, valid server):

- `loose-schemas`: tool `search` has an `inputSchema` without `"type": "object"` (as a popular
  GitLab server's tools had), `toggle` a boolean property schema, and `scalar` a schema that
  is no object schema at all;
- `no-templates`: resources are declared but `resources/templates/list` answers -32601 (as
  server-memory's and others' SDK versions do for lists they do not implement);
- `ask-roots`: asks the client `roots/list` as soon as it is initialized, outside any call
  (as server-filesystem does), and tool `roots_seen` says what came back.

Tool `roots_now` asks `roots/list` in the middle of its call and answers with what came back.

Results carry no `resultType` (the 2025-11-25 wire has none)."""

from __future__ import annotations

import json
import sys
from typing import Any

FLAGS = set(sys.argv[1:])
TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Echo the text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {"name": "roots_now", "description": "Ask for roots now.", "inputSchema": {"type": "object"}},
    {
        "name": "roots_seen",
        "description": "What roots/list answered.",
        "inputSchema": {"type": "object"},
    },
]
LOOSE: list[dict[str, Any]] = [
    {
        "name": "search",
        "description": "Search the notes.",
        "inputSchema": {"properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
    {
        "name": "toggle",
        "description": "Switch something.",
        "inputSchema": {"type": "object", "properties": {"on": True}},
    },
    {"name": "scalar", "description": "Takes a bare string.", "inputSchema": {"type": "string"}},
]
roots_answers: list[Any] = []
#: Lines read while waiting for an answer in the middle of a call, handled after it.
later: list[str] = []


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def call(params: dict[str, Any]) -> dict[str, Any]:
    name, arguments = params.get("name"), params.get("arguments") or {}
    if name == "echo":
        return text(str(arguments.get("text", "")))
    if name == "search":
        return text(f"found: {arguments.get('query')}")
    if name == "toggle":
        return text(f"on: {arguments.get('on')}")
    if name == "roots_seen":
        return text(json.dumps(roots_answers))
    if name == "roots_now":
        send({"jsonrpc": "2.0", "id": "roots-now", "method": "roots/list"})
        for line in sys.stdin:
            message = json.loads(line)
            if message.get("id") == "roots-now" and "method" not in message:
                return text(json.dumps(message.get("result", {"error": message.get("error")})))
            later.append(line)
        return {**text("no answer"), "isError": True}
    return {**text(f"unknown tool {name}"), "isError": True}


def result_of(method: str, params: dict[str, Any]) -> Any:
    if method == "initialize":
        return {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
            "serverInfo": {"name": "quirky-legacy", "version": "1.0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS + (LOOSE if "loose-schemas" in FLAGS else [])}
    if method == "tools/call":
        return call(params)
    if method == "resources/list":
        return {"resources": [{"uri": "notes://today", "name": "today", "mimeType": "text/plain"}]}
    if method == "resources/templates/list" and "no-templates" not in FLAGS:
        return {"resourceTemplates": []}
    if method == "resources/read":
        return {"contents": [{"uri": params.get("uri"), "text": "buy milk"}]}
    if method == "prompts/list":
        return {"prompts": [{"name": "greet", "arguments": [{"name": "who"}]}]}
    if method == "prompts/get":
        who = (params.get("arguments") or {}).get("who", "you")
        return {"messages": [{"role": "user", "content": {"type": "text", "text": f"Hi {who}"}}]}
    if method == "ping":
        return {}
    return None


def main() -> None:
    for line in sys.stdin:
        handle(line)
        while later:
            handle(later.pop(0))


def handle(line: str) -> None:
    if not line.strip():
        return
    message = json.loads(line)
    method, rid = message.get("method"), message.get("id")
    if method is None:  # the answer to our roots/list
        roots_answers.append(message.get("result", {"error": message.get("error")}))
        return
    if method == "notifications/initialized" and "ask-roots" in FLAGS:
        send({"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"})
    if rid is None:
        return
    result = result_of(method, message.get("params") or {})
    if result is None:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        send({"jsonrpc": "2.0", "id": rid, "error": error})
    else:
        send({"jsonrpc": "2.0", "id": rid, "result": result})


if __name__ == "__main__":
    main()
