"""The fuzz suite's machinery: what to send (hypothesis strategies, schema-driven from the
published schemas in tests/data, then mutated) and where (real server processes on stdio and
HTTP, both eras), and the oracle that judges every batch.

The oracle, after every batch: the process has not exited; no HTTP 500; no traceback in the
server's log other than a tool's own failure; every request answered within `DEADLINE`
seconds (a `subscriptions/listen` acknowledged within it); and a canary request answered.
Blocking I/O and threads, no event loop: hypothesis drives plain functions.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from support import scaled

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests/data"
SERVER = ROOT / "tests/servers/fuzz_server.py"
DEADLINE = scaled(10.0)  # every answer's deadline, MCPKIT_TEST_SLOWDOWN applied
MODERN, LEGACY = "2026-07-28", "2025-11-25"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "0"},
}
TOOLS = ["echo", "add", "chatty", "confirm", "refuse", "broken", "job", "nope"]
URIS = ["fuzz://static", "fuzz://items/1", "fuzz://nope"]
#: A tool's own failure may log a traceback; nothing else may.
TOOL_FAILURE = re.compile(r"tool .* failed", re.IGNORECASE)


def budget(small: int) -> int:
    """Examples per target: `small` in `make test`, MCPKIT_FUZZ_EXAMPLES in CI."""
    return int(os.environ.get("MCPKIT_FUZZ_EXAMPLES", small))


class OracleFailure(AssertionError):
    pass


# -- what to send ----------------------------------------------------------------------------
#: Any Unicode but lone surrogates (JSON cannot carry those; they would only test the parser).
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=16)
JSON_LEAF = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


@cache
def schema(revision: str) -> dict[str, Any]:
    defs: dict[str, Any] = json.loads((DATA / f"schema-{revision}.json").read_text())["$defs"]
    if revision == MODERN:
        tasks = json.loads((DATA / "schema-ext-tasks-draft.json").read_text())["$defs"]
        for key, value in tasks.items():
            defs.setdefault(key, value)
    return defs


def _refs(defs: dict[str, Any], name: str) -> list[str]:
    union = defs[name]
    return [r["$ref"].rsplit("/", 1)[1] for r in union.get("anyOf", [{"$ref": f"#/{name}"}])]


class SchemaStrategies:
    """Hypothesis strategies for instances of a JSON Schema (the subset MCP's schemas use),
    recursion cut at `max_depth`. Instances are mostly valid: keyword limits are ignored."""

    def __init__(self, defs: dict[str, Any], max_depth: int = 5) -> None:
        self.defs = defs
        self.max_depth = max_depth

    def of(self, node: Any, depth: int = 0) -> st.SearchStrategy[Any]:
        if not isinstance(node, dict) or depth > self.max_depth:
            return JSON_LEAF
        if "$ref" in node:
            return self.of(self.defs[node["$ref"].rsplit("/", 1)[1]], depth + 1)
        if "const" in node:
            return st.just(node["const"])
        if "enum" in node:
            return st.sampled_from(node["enum"])
        for key in ("anyOf", "oneOf"):
            if key in node:
                return st.one_of([self.of(n, depth + 1) for n in node[key]])
        if "allOf" in node:
            return self._object(self._merged(node["allOf"]), depth)
        kind = node.get("type")
        if isinstance(kind, list):
            return st.one_of([self.of({**node, "type": k}, depth) for k in kind])
        if kind == "string":
            return st.sampled_from(URIS) if node.get("format") == "uri" else TEXT
        if kind == "integer":
            return st.integers(-1000, 2**40)
        if kind == "number":
            return st.integers(-1000, 1000) | st.floats(-1e6, 1e6, allow_nan=False)
        if kind == "boolean":
            return st.booleans()
        if kind == "null":
            return st.none()
        if kind == "array":
            return st.lists(self.of(node.get("items", {}), depth + 1), max_size=3)
        if kind == "object" or "properties" in node:
            return self._object(node, depth)
        return JSON

    def _merged(self, parts: list[Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in parts:
            if "$ref" in part:
                part = self.defs[part["$ref"].rsplit("/", 1)[1]]
            out["properties"].update(part.get("properties", {}))
            out["required"] += part.get("required", [])
        return out

    def _object(self, node: dict[str, Any], depth: int) -> st.SearchStrategy[Any]:
        props = node.get("properties", {})
        required = set(node.get("required", []))
        return st.fixed_dictionaries(
            {k: self.of(v, depth + 1) for k, v in props.items() if k in required},
            optional={k: self.of(v, depth + 1) for k, v in props.items() if k not in required},
        )


@cache
def _client_messages(revision: str) -> st.SearchStrategy[dict[str, Any]]:
    """Requests and notifications, each kind as likely as the other."""
    defs = schema(revision)
    requests = _refs(defs, "ClientRequest")
    if revision == MODERN:
        requests += ["GetTaskRequest", "UpdateTaskRequest", "CancelTaskRequest"]
    gen = SchemaStrategies(defs)
    kinds = {
        "request": st.one_of([gen.of(defs[n]) for n in requests]),
        "notification": st.one_of([gen.of(defs[n]) for n in _refs(defs, "ClientNotification")]),
    }
    # sampled, not `|`: hypothesis flattens unions, which would weigh every method alike
    return st.sampled_from(sorted(kinds)).flatmap(kinds.__getitem__)


@st.composite
def _aimed(draw: st.DrawFn, revision: str) -> dict[str, Any]:
    """A schema-generated client message, aimed at what the server has (names, `_meta`)."""
    message = dict(draw(_client_messages(revision)))
    params = message.get("params")
    if isinstance(params, dict):
        params = dict(params)
        if "name" in params and draw(st.booleans()):
            params["name"] = draw(st.sampled_from([*TOOLS, "greet"]))
        if "uri" in params and draw(st.booleans()):
            params["uri"] = draw(st.sampled_from(URIS))
        if revision == MODERN and "id" in message and draw(st.integers(0, 4)):
            meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            params["_meta"] = {**meta, **META}
        message["params"] = params
    return message


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*path, i))
    return out


@st.composite
def _mutated(draw: st.DrawFn, message: dict[str, Any]) -> Any:
    """One random change somewhere in the message: a new value, a deletion, a wrapping."""
    paths = _paths(message)
    params = message.get("params")
    if isinstance(params, dict) and params and draw(st.integers(0, 2)):
        path = ("params", draw(st.sampled_from(sorted(params))))  # where handlers look first
    else:
        path = draw(st.sampled_from(paths))
    # Type confusion first: a container where a scalar was (the unhashable-id bug class).
    how = draw(
        st.sampled_from(["list", "list", "object", "object", "value", "value", "delete", "null"])
    )
    copy = json.loads(json.dumps(message))
    if not path:
        return draw(JSON)
    parent = copy
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if how == "delete" and isinstance(parent, dict):
        del parent[last]
    elif how == "list":
        parent[last] = [parent[last]]
    elif how == "object":
        parent[last] = {"k": parent[last]}
    elif how == "null":
        parent[last] = None
    else:
        parent[last] = draw(JSON)
    return copy


@st.composite
def client_message(draw: st.DrawFn, revision: str) -> bytes:
    """One line / body: aimed, mutated, or garbage."""
    kind = draw(st.sampled_from(["aimed"] * 4 + ["mutated"] * 5 + ["garbage"]))
    if kind == "garbage":
        raw = draw(st.binary(max_size=40) | JSON.map(lambda v: json.dumps(v).encode()))
        return raw.replace(b"\n", b" ").replace(b"\r", b" ")
    message = draw(_aimed(revision))
    value = draw(_mutated(message)) if kind == "mutated" else message
    return json.dumps(value).encode()


@st.composite
def http_headers(draw: st.DrawFn, body: bytes, era: str) -> dict[str, str]:
    """The headers a client would send for `body`, then randomly dropped, changed or added."""
    try:
        message = json.loads(body)
    except ValueError:
        message = {}
    message = message if isinstance(message, dict) else {}
    method = message.get("method")
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    headers["mcp-protocol-version"] = MODERN if era == MODERN else LEGACY
    if isinstance(method, str):
        headers["mcp-method"] = method
    for field_name in ("name", "uri", "taskId"):
        if isinstance(params.get(field_name), str):
            headers["mcp-name"] = params[field_name]
    text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=24)
    if draw(st.integers(0, 3)):
        return headers  # mostly what a client would send: the message goes deep
    for _ in range(draw(st.integers(0, 2))):
        action = draw(st.sampled_from(["drop", "change", "add"]))
        if action == "drop" and headers:
            headers.pop(draw(st.sampled_from(sorted(headers))))
        elif action == "change" and headers:
            headers[draw(st.sampled_from(sorted(headers)))] = draw(text)
        else:
            name = draw(st.sampled_from(["mcp-param-region", "mcp-name", "x-extra", "origin"]))
            headers[name] = draw(text)
    return {k: "".join(c for c in v if c.isascii() and c.isprintable()) for k, v in headers.items()}


def batches(revision: str, http: bool) -> st.SearchStrategy[list[tuple[bytes, dict[str, str]]]]:
    """Batches of 1-6 messages; on HTTP each with its (fuzzed) headers."""

    @st.composite
    def item(draw: st.DrawFn) -> tuple[bytes, dict[str, str]]:
        body = draw(client_message(revision))
        return body, draw(http_headers(body, revision)) if http else {}

    return st.lists(item(), min_size=1, max_size=6)


# -- where to send it ------------------------------------------------------------------------
def expects_answer(body: bytes) -> Any:
    """The id the server must answer, or None (notifications, responses, no readable id)."""
    try:
        obj = json.loads(body)
    except ValueError:
        return None
    if type(obj) is not dict:
        return None
    rid = obj.get("id")
    if type(rid) not in (str, int):
        return None
    if obj.get("method") is None and ("result" in obj or "error" in obj):
        return None
    return rid


def retag(body: bytes, rid: str) -> bytes:
    """Give a request the harness's own unique id (so its answer can be told apart)."""
    try:
        obj = json.loads(body)
    except ValueError:
        return body
    if type(obj) is dict and type(obj.get("id")) in (str, int):
        obj["id"] = rid
        return json.dumps(obj).encode()
    return body


@dataclass
class Log:
    """A process's stderr, read on a thread."""

    lines: list[str] = field(default_factory=list)
    checked: int = 0

    def follow(self, stream: Any) -> None:
        for raw in iter(stream.readline, b""):
            self.lines.append(raw.decode("utf-8", "replace").rstrip())

    def new_tracebacks(self) -> list[str]:
        """Tracebacks logged since the last call, a tool's own failures excepted."""
        found = []
        end = len(self.lines)
        for i in range(self.checked, end):
            if self.lines[i].startswith("Traceback") and not (
                i > 0 and TOOL_FAILURE.search(self.lines[i - 1])
            ):
                found.append("\n".join(self.lines[max(0, i - 1) : i + 25]))
        self.checked = end
        return found


class Target:
    """A fuzz_server.py process; `check(batch)` sends a batch and applies the oracle."""

    era = MODERN
    process: subprocess.Popen[bytes] | None = None

    def __init__(self, *, plant: bool = False) -> None:
        self.plant = plant
        self.counter = 0
        self.log = Log()
        self.restarts = 0

    def next_id(self) -> str:
        self.counter += 1
        return f"fz-{self.counter}"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def ensure(self) -> None:
        if not self.alive():
            if self.process is not None:
                self.restarts += 1
            self.start()

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
        if self.process is not None:
            self.process.wait(scaled(10))

    def verdict(self, what: str) -> None:
        if not self.alive():
            assert self.process is not None
            code = self.process.poll()
            tail = "\n".join(self.log.lines[-30:])
            raise OracleFailure(f"the server exited ({code}) after {what}\n{tail}")
        tracebacks = self.log.new_tracebacks()
        if tracebacks:
            raise OracleFailure(f"a traceback in the server log after {what}:\n{tracebacks[0]}")

    def check(self, batch: list[tuple[bytes, dict[str, str]]]) -> None:
        self.ensure()
        try:
            self.send(batch)
            self.canary()
        finally:
            self.verdict(f"the batch {[body[:200] for body, _ in batch]}")

    def send(self, batch: list[tuple[bytes, dict[str, str]]]) -> None:
        raise NotImplementedError

    def canary(self) -> None:
        raise NotImplementedError


def canary_body(rid: str, era: str) -> bytes:
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": "canary"}}
    if era == MODERN:
        params["_meta"] = META
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    ).encode()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": LEGACY,
        "capabilities": {"elicitation": {}, "roots": {}},
        "clientInfo": {"name": "fuzz", "version": "0"},
    },
}


def answer_for(request: dict[str, Any]) -> dict[str, Any]:
    """What the fuzz client answers a server→client request with (a session's input)."""
    method = request.get("method")
    result: dict[str, Any]
    if method == "elicitation/create":
        result = {"action": "decline"}
    elif method == "roots/list":
        result = {"roots": []}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}
