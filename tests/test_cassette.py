"""The cassette's parts without processes: redaction, grouping a log into exchanges, matching,
the replayer's state machine (new ids, tokens and keys; server requests; misses), the file
format, and the host config's `cassette` entry. The processes: tests/test_record_replay.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcpkit.cassette.exchanges import group
from mcpkit.cassette.format import (
    Cassette,
    CassetteError,
    CassetteWriter,
    Entry,
    new_header,
    read_cassette,
)
from mcpkit.cassette.http_record import SSEData
from mcpkit.cassette.redact import REDACTED, Redactor
from mcpkit.cassette.replayer import Replayer
from mcpkit.host import ConfigError, parse_config

KEY = "dev.mcpkit/idempotencyKey"


def rpc(id: Any, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def result(id: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": value}


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def tape(*entries: tuple[str, dict[str, Any]]) -> Cassette:
    header = new_header({"command": ["x"]}, {}, ())
    return Cassette(header, [Entry(side, message) for side, message in entries], "t.jsonl")


def test_redaction_of_names_values_headers_and_the_environment() -> None:
    environ = {"SHOP_API_TOKEN": "tok-123456789", "HOME": "/root", "REGION": "eu"}
    redactor = Redactor(["*session*"], environ)
    assert redactor.environment(environ) == {"REGION": "eu", "SHOP_API_TOKEN": REDACTED}
    headers = {"Authorization": "Bearer abcdefgh", "X-Session-Id": "s-1234567", "Accept": "*/*"}
    assert redactor.headers(headers) == {
        "Authorization": REDACTED,
        "X-Session-Id": REDACTED,
        "Accept": "*/*",
    }
    message = rpc(
        1,
        "tools/call",
        name="login",
        arguments={"api_key": "k-99999999", "note": "k-99999999 or tok-123456789 or abcdefgh"},
        _meta={"progressToken": "p-1", KEY: "idem-1"},
    )
    redacted = redactor.value(message)
    arguments = redacted["params"]["arguments"]
    assert arguments["api_key"] == REDACTED
    assert arguments["note"] == f"{REDACTED} or {REDACTED} or {REDACTED}"
    # Protocol fields named like secrets stay: replay needs them.
    assert redacted["params"]["_meta"] == {"progressToken": "p-1", KEY: "idem-1"}
    assert redactor.value({"maxTokens": 100, "password": ""}) == {"maxTokens": 100, "password": ""}
    assert message["params"]["arguments"]["api_key"] == "k-99999999"  # the input is unchanged


def test_a_log_groups_into_exchanges_with_server_requests_and_progress() -> None:
    exchanges = group(
        [
            Entry("client", rpc(1, "tools/call", name="a", _meta={"progressToken": 7})),
            Entry("client", rpc(2, "tools/call", name="b")),
            Entry("server", {"jsonrpc": "2.0", "method": "notifications/progress",
                             "params": {"progressToken": 7, "progress": 1}}),
            Entry("server", rpc(0, "elicitation/create", message="sure?")),
            Entry("client", result(0, {"action": "accept"})),
            Entry("server", result(2, text("b done"))),
            Entry("server", result(1, text("a done"))),
            Entry("client", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
            Entry("server", rpc(1, "roots/list")),
            Entry("client", result(1, {"roots": []})),
        ]
    )  # fmt: skip
    first, second, notice = exchanges
    assert [s.message["method"] for s in first.steps] == ["notifications/progress"]
    assert first.response == result(1, text("a done"))
    (asked,) = second.steps
    assert asked.message["method"] == "elicitation/create"
    assert asked.answer == result(0, {"action": "accept"})
    assert notice.response is None and notice.steps[0].answer == result(1, {"roots": []})


def test_replay_answers_with_this_runs_id_progress_token_and_idempotency_key() -> None:
    recorded_key = "key-recorded-0001"
    call = rpc(5, "tools/call", name="add", arguments={"a": 1},
               _meta={"progressToken": "tok-recorded-1", KEY: recorded_key,
                      "traceparent": "00-aaaa-bbbb-01"})  # fmt: skip
    progress = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "tok-recorded-1", "progress": 1}}  # fmt: skip
    answer = result(5, {**text("2"), "_meta": {"echo": recorded_key}})
    replayer = Replayer(tape(("client", call), ("server", progress), ("server", answer)))
    again = rpc("run-2", "tools/call", name="add", arguments={"a": 1},
                _meta={"progressToken": 42, KEY: "key-this-run-0002"})  # fmt: skip
    sent_progress, sent_answer = replayer.receive(again)
    assert sent_progress["params"]["progressToken"] == 42
    assert sent_answer == result("run-2", {**text("2"), "_meta": {"echo": "key-this-run-0002"}})


def test_equal_requests_replay_in_order_then_the_last_repeats() -> None:
    replayer = Replayer(
        tape(
            ("client", rpc(1, "tools/call", name="next")),
            ("server", result(1, text("one"))),
            ("client", rpc(2, "tools/call", name="next")),
            ("server", result(2, text("two"))),
        )
    )
    answers = [replayer.receive(rpc(i, "tools/call", name="next"))[0] for i in range(3)]
    assert [a["result"]["content"][0]["text"] for a in answers] == ["one", "two", "two"]


def test_a_request_the_cassette_lacks_names_the_closest_recorded_one() -> None:
    replayer = Replayer(
        tape(
            ("client", rpc(1, "tools/call", name="read_file", arguments={"path": "/srv/a.txt"})),
            ("server", result(1, text("a"))),
        )
    )
    (miss,) = replayer.receive(
        rpc(9, "tools/call", name="read_file", arguments={"path": "/srv/b.txt"})
    )
    assert miss["id"] == 9 and miss["error"]["code"] == -32602
    message = miss["error"]["message"]
    assert "\n" not in message
    assert (
        'replay: tools/call read_file {"path":"/srv/b.txt"} is not in the cassette t.jsonl'
        in message
    )
    assert 'closest recorded request is tools/call read_file {"path":"/srv/a.txt"}' in message
    (other,) = replayer.receive(rpc(10, "prompts/list"))
    assert other["error"]["code"] == -32601
    assert "holds no prompts/list (it holds tools/call)" in other["error"]["message"]
    assert replayer.receive(rpc(11, "ping")) == [result(11, {})]  # ping needs no recording


def test_a_server_request_waits_for_the_clients_answer_and_checks_it() -> None:
    entries = (
        ("client", rpc(1, "tools/call", name="order", arguments={"item": "tea"})),
        ("server", rpc(0, "elicitation/create", message="Order tea?")),
        ("client", result(0, {"action": "accept", "content": {"confirm": True}})),
        ("server", result(1, text("ordered tea"))),
    )
    replayer = Replayer(tape(*entries))
    (question,) = replayer.receive(rpc(7, "tools/call", name="order", arguments={"item": "tea"}))
    assert question["method"] == "elicitation/create"
    done = replayer.receive(
        result(question["id"], {"action": "accept", "content": {"confirm": True}})
    )
    assert done == [result(7, text("ordered tea"))]
    # Another answer than the recorded one: no made-up outcome, an error that says so.
    (question,) = replayer.receive(rpc(8, "tools/call", name="order", arguments={"item": "tea"}))
    (refused,) = replayer.receive(result(question["id"], {"action": "decline"}))
    assert refused["id"] == 8 and "differs from the recorded one" in refused["error"]["message"]


def test_the_writer_learns_era_and_server_and_the_reader_checks_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    writer = CassetteWriter(path, new_header({"command": ["srv"]}, {}, ("*token*",)))
    writer.add("client", rpc(0, "initialize", protocolVersion="2025-11-25"))
    info = {"name": "srv", "version": "1"}
    writer.add("server", result(0, {"protocolVersion": "2025-11-25", "serverInfo": info}))
    writer.close()
    cassette = read_cassette(path)
    assert cassette.header["era"] == "2025-11-25" and cassette.header["serverInfo"] == info
    assert [e.side for e in cassette.entries] == ["client", "server"]
    path.write_bytes(orjson.dumps({"not": "a cassette"}) + b"\n")
    with pytest.raises(CassetteError, match="is not an mcpkit cassette"):
        read_cassette(path)
    with pytest.raises(CassetteError, match="record one with `mcpkit record --out"):
        read_cassette(tmp_path / "missing.jsonl")


def test_a_host_config_entry_can_point_at_a_cassette() -> None:
    config = parse_config({"mcpServers": {"fs": {"cassette": "tests/data/fs.jsonl"}}})
    server = config.servers["fs"]
    assert server.transport == "stdio" and server.command == sys.executable
    assert server.args == ("-m", "mcpkit", "replay", "tests/data/fs.jsonl")


def test_a_host_config_entry_can_record_its_server() -> None:
    entry = {"command": "npx", "args": ["server", 1], "record": "s.jsonl", "redact": ["*sid*"]}
    server = parse_config({"mcpServers": {"s": entry}}).servers["s"]
    assert server.command == sys.executable
    assert server.args == (
        "-m", "mcpkit", "record", "--out", "s.jsonl", "--quiet", "--redact", "*sid*",
        "--", "npx", "server", "1",
    )  # fmt: skip
    with pytest.raises(ConfigError, match='"redact" is a list of name patterns'):
        parse_config({"mcpServers": {"s": {**entry, "redact": "*sid*"}}})
    with pytest.raises(ConfigError, match='"record" records a stdio server'):
        parse_config({"mcpServers": {"s": {"url": "http://x/mcp", "record": "s.jsonl"}}})


def test_sse_events_are_read_whole_across_chunks() -> None:
    events = SSEData()
    assert events.feed(b'event: message\r\ndata: {"a":') == []
    assert events.feed(b"1}\r\n\r\n: keep-alive\n\nid: 7\ndata: [1,\ndata: 2]\n\n") == [
        b'{"a":1}',
        b"[1,\n2]",
    ]
