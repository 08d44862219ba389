"""Host building blocks: configuration, names, schemas, consent, output caps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpkit.host.config import ConfigError, load_config, parse_config
from mcpkit.host.consent import ConsentPolicy, Decision, PendingCall
from mcpkit.host.content import result_blocks
from mcpkit.host.naming import MAX_LEN, ToolNames, alias_for
from mcpkit.host.schemas import adapt, without


def test_config_expansion_and_kinds() -> None:
    data = {
        "mcpServers": {
            "a": {
                "command": "python",
                "args": ["${SCRIPT}", 3],
                "env": {"K": "${MISSING:-fallback}"},
                "trusted": True,
            },
            "b": {
                "type": "http",
                "url": "https://x.example/${PATH_PART:-mcp}",
                "headers": {"Authorization": "Bearer ${TOKEN}"},
                "hostOwned": ["customer_id"],
            },
        }
    }
    cfg = parse_config(data, env={"SCRIPT": "s.py", "TOKEN": "t0k"})
    a, b = cfg.servers["a"], cfg.servers["b"]
    assert (a.transport, a.command, a.args, dict(a.env), a.trusted) == (
        "stdio",
        "python",
        ("s.py", "3"),
        {"K": "fallback"},
        True,
    )
    assert (b.transport, b.url, dict(b.headers)) == (
        "http",
        "https://x.example/mcp",
        {"Authorization": "Bearer t0k"},
    )
    assert dict(b.host_owned) == {"customer_id": None} and not b.trusted
    assert a.client_target()["args"] == ["s.py", "3"] and b.client_target()["type"] == "http"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"command": "x", "args": ["${NOPE}"]}, "NOPE is not set"),
        ({"type": "sse", "url": "http://x"}, "not supported"),
        ({"type": "http", "url": "ftp://x"}, r"http\(s\) URL"),
        ({"args": []}, 'needs "command"'),
        ({"command": "x", "trusted": "yes"}, "true or false"),
        ({"command": "x", "type": "grpc"}, 'unknown "type"'),
        ([], "must be an object"),
    ],
)
def test_config_errors_are_clear(entry: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_config({"mcpServers": {"srv": entry}}, source="my.json", env={})
    assert "my.json" in str(info.value) and "'srv'" in str(info.value)


def test_config_file_loading(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"s": {"command": "echo"}}}))
    assert list(load_config(path).servers) == ["s"]
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(path)
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "absent.json")


def test_names() -> None:
    assert alias_for("shipping", "track_parcel") == "shipping__track_parcel"
    assert (
        alias_for("my.server", "get.thing v2") == "my_server__get_thing_v2"
    )  # dots and spaces → _
    long = alias_for("s" * 40, "t" * 40)
    assert len(long) == MAX_LEN
    names = ToolNames([("a.b", "x"), ("a_b", "x"), ("c", "y")])
    ab1, ab2 = names.alias("a.b", "x"), names.alias("a_b", "x")
    assert ab1 != ab2 and len(names) == 3  # collision broken deterministically
    assert names.resolve(ab1) == ("a.b", "x") and names.resolve(ab2) == ("a_b", "x")
    assert ToolNames([("a_b", "x"), ("a.b", "x")]).alias("a.b", "x") == ab1  # order does not matter
    assert names.resolve("nope") is None


def test_schema_adaptation() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"addr": {"type": "object", "properties": {"city": {"type": "string"}}}},
        "properties": {"home": {"$ref": "#/$defs/addr"}, "customer_id": {"type": "string"}},
        "required": ["home", "customer_id"],
    }
    adapted = adapt(without(schema, {"customer_id"}))
    assert not adapted.wrapped and "$defs" not in adapted.schema
    assert adapted.schema["properties"] == {
        "home": {"type": "object", "properties": {"city": {"type": "string"}}}
    }
    assert adapted.schema["required"] == ["home"]
    assert schema["properties"]["home"] == {
        "$ref": "#/$defs/addr"
    }  # the server's schema is untouched
    union = adapt(
        {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "object"}]}
    )
    assert (
        union.wrapped and union.schema["type"] == "object" and "input" in union.schema["properties"]
    )
    assert union.to_server({"input": {"a": "x"}}) == {"a": "x"}
    recursive = adapt(
        {
            "type": "object",
            "$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}},
            "properties": {"root": {"$ref": "#/$defs/n"}},
        }
    )
    assert "recursive" in json.dumps(recursive.schema)


def call(alias: str, trusted: bool, **hints: object) -> PendingCall:
    return PendingCall(alias, alias.split("__")[0], alias.split("__")[1], {}, dict(hints), trusted)


def test_consent_policy() -> None:
    policy = ConsentPolicy(allow=["shipping__*"], deny=["*__drop_*"])
    assert policy.decide(call("shipping__track", False)) is Decision.ALLOW  # explicit rule
    assert policy.decide(call("db__drop_table", True, readOnlyHint=True)) is Decision.DENY
    assert policy.decide(call("x__read", True, readOnlyHint=True)) is Decision.ALLOW
    assert (
        policy.decide(call("x__read", False, readOnlyHint=True)) is Decision.ASK
    )  # TOOL-12: untrusted hints
    assert policy.decide(call("x__write", True)) is Decision.ASK  # destructive by default
    assert (
        policy.decide(call("x__add", True, destructiveHint=False)) is Decision.ASK
    )  # open world by default
    assert (
        policy.decide(call("x__add", True, destructiveHint=False, openWorldHint=False))
        is Decision.ALLOW
    )
    assert not policy.may_sample("x") and ConsentPolicy(allow_sampling=["x"]).may_sample("x")


def test_structured_content_becomes_text() -> None:
    assert result_blocks({"content": [], "structuredContent": {"a": 1}}) == [
        {"type": "text", "text": '{"a": 1}'}
    ]
