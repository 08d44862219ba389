"""Every message the server sent on the 2025-11-25 session wire in this run is valid against the
2025-11-25 schema (results by their request's method, notifications and requests by their own),
and carries nothing of the 2026-07-28 wire (B.1.5). Runs last (conftest).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema_rs

from legacy_support import LEGACY_WIRE
from support import ROOT, feed_wire_if_alone

SCHEMA = ROOT / "tests/data/schema-2025-11-25.json"  # source and licence: tests/data/README.md

RESULTS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "logging/setLevel": "EmptyResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
}
SERVER_MESSAGES = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/cancelled": "CancelledNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "elicitation/create": "ElicitRequest",
    "sampling/createMessage": "CreateMessageRequest",
    "roots/list": "ListRootsRequest",
}


@cache
def validator(definition: str) -> Any:
    schema = json.loads(SCHEMA.read_text())
    return jsonschema_rs.validator_for({"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]})


def definitions_for(method: str, message: dict[str, Any]) -> list[str]:
    defs = ["JSONRPCMessage"]
    if "error" in message:
        defs.append("JSONRPCErrorResponse")
    elif "result" in message:
        defs.append("JSONRPCResultResponse")
        if method in RESULTS:
            defs.append(RESULTS[method])
    else:
        assert message["method"] in SERVER_MESSAGES, f"unexpected {message['method']}"
        defs.append(SERVER_MESSAGES[message["method"]])
    return defs


def test_every_recorded_session_message_is_2025_schema_valid() -> None:
    feed_wire_if_alone(LEGACY_WIRE, 50, ("test_legacy_http.py", "test_legacy_stdio.py"))
    assert len(LEGACY_WIRE) > 50, "the suite recorded too few session messages"
    failures, kinds = [], set()
    for method, message in LEGACY_WIRE:
        for definition in definitions_for(method, message):
            kinds.add(definition)
            value = message["result"] if definition in RESULTS.values() else message
            errors = [e.message for e in validator(definition).iter_errors(value)]
            if errors:
                failures.append(
                    f"{method} as {definition}: {errors[:3]} {json.dumps(message)[:300]}"
                )
        result = message.get("result")
        if isinstance(result, dict):  # B.1.5: nothing of the modern wire leaks
            assert not {"resultType", "ttlMs", "cacheScope"} & set(result), message
            assert "io.modelcontextprotocol/serverInfo" not in (result.get("_meta") or {}), message
    assert not failures, "\n".join(failures[:20])
    assert {
        "InitializeResult",
        "EmptyResult",
        "ListToolsResult",
        "CallToolResult",
        "ReadResourceResult",
        "GetPromptResult",
        "ElicitRequest",
        "CreateMessageRequest",
        "ListRootsRequest",
        "ProgressNotification",
        "LoggingMessageNotification",
        "ResourceUpdatedNotification",
        "JSONRPCErrorResponse",
    } <= kinds


def test_the_2025_validator_can_fail() -> None:
    assert not validator("InitializeResult").is_valid({"protocolVersion": "2025-11-25"})
    bad = {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {"message": "x"}}
    assert not validator("ElicitRequest").is_valid(bad)
