"""What servers send, checked when a test records it: `check(era, method, message)` validates
one message against the published schema of its wire (tests/data, source and licence in
tests/data/README.md), so the test that produced a bad message is the one that fails.

2026-07-28: `JSONRPCMessage`, then the definition for its method (results by the request's
method, notifications by their own; the tasks extension's shapes from its own schema).
2025-11-25: the same against that schema, and nothing of the 2026-07-28 wire (B.1.5).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs

DATA = Path(__file__).resolve().parent / "data"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
SCHEMAS = {MODERN: DATA / "schema-2026-07-28.json", LEGACY: DATA / "schema-2025-11-25.json"}
#: The tasks extension's own schema (its shapes are not in the core one).
TASKS_SCHEMA = DATA / "schema-ext-tasks-draft.json"

RESULTS = {
    MODERN: {
        "server/discover": "DiscoverResult",
        "tools/list": "ListToolsResult",
        "tools/call": "CallToolResult",
        "resources/list": "ListResourcesResult",
        "resources/templates/list": "ListResourceTemplatesResult",
        "resources/read": "ReadResourceResult",
        "prompts/list": "ListPromptsResult",
        "prompts/get": "GetPromptResult",
        "completion/complete": "CompleteResult",
        "subscriptions/listen": "SubscriptionsListenResult",
        "tasks/get": "GetTaskResult",
        "tasks/update": "UpdateTaskResult",
        "tasks/cancel": "CancelTaskResult",
    },
    LEGACY: {
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
    },
}
#: Definitions looked up in the tasks extension's schema.
TASK_DEFINITIONS = {
    "GetTaskResult",
    "UpdateTaskResult",
    "CancelTaskResult",
    "CreateTaskResult",
    "TaskStatusNotification",
}
#: What a server may send that is not a response: notifications (and, on a session, requests).
SERVER_MESSAGES = {
    MODERN: {
        "notifications/progress": "ProgressNotification",
        "notifications/message": "LoggingMessageNotification",
        "notifications/tools/list_changed": "ToolListChangedNotification",
        "notifications/prompts/list_changed": "PromptListChangedNotification",
        "notifications/resources/list_changed": "ResourceListChangedNotification",
        "notifications/resources/updated": "ResourceUpdatedNotification",
        "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
        "notifications/tasks": "TaskStatusNotification",
    },
    LEGACY: {
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
    },
}


@cache
def schema_defs(path: str) -> dict[str, Any]:
    defs: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))["$defs"]
    return defs


@cache
def validator(era: str, definition: str) -> Any:
    path = TASKS_SCHEMA if era == MODERN and definition in TASK_DEFINITIONS else SCHEMAS[era]
    defs = schema_defs(str(path))
    return jsonschema_rs.validator_for({"$ref": f"#/$defs/{definition}", "$defs": defs})


def definitions_for(era: str, method: str, message: dict[str, Any]) -> list[str]:
    """The schema definitions `message` (an answer to `method`, or a message of its own)
    must satisfy."""
    defs = ["JSONRPCMessage"]
    if "error" in message:
        defs.append("JSONRPCErrorResponse")
    elif "result" in message:
        defs.append("JSONRPCResultResponse")
        result_type = message["result"].get("resultType") if era == MODERN else None
        if result_type == "input_required":
            defs.append("InputRequiredResult")
        elif result_type == "task":
            assert method == "tools/call", f"a task answered {method} (TASK-02)"
            defs.append("CreateTaskResult")
        elif method in RESULTS[era]:
            defs.append(RESULTS[era][method])
    else:
        kind = message.get("method")
        assert kind in SERVER_MESSAGES[era], f"unexpected server message {kind} on {era}"
        defs.append(SERVER_MESSAGES[era][kind])
        if era == MODERN:
            assert "id" not in message, message  # BASE-15
    return defs


def problems(era: str, method: str, message: dict[str, Any]) -> list[str]:
    """What is wrong with one message (empty: nothing)."""
    found = []
    for definition in definitions_for(era, method, message):
        is_result = definition in RESULTS[era].values() or definition in (
            "InputRequiredResult",
            "CreateTaskResult",
        )
        value = message["result"] if is_result else message
        errors = [e.message for e in validator(era, definition).iter_errors(value)]
        if errors:
            found.append(f"{method} as {definition}: {errors[:3]}")
    result = message.get("result")
    if era == LEGACY and isinstance(result, dict):  # B.1.5: nothing of the modern wire leaks
        leaked = {"resultType", "ttlMs", "cacheScope"} & set(result)
        if "io.modelcontextprotocol/serverInfo" in (result.get("_meta") or {}):
            leaked.add("_meta serverInfo")
        if leaked:
            found.append(f"{method}: 2026-07-28 fields on a 2025-11-25 session: {sorted(leaked)}")
    return found


def check(era: str, method: str, message: dict[str, Any]) -> None:
    """Fail the calling test when `message` is not valid `era` wire."""
    found = problems(era, method, message)
    assert not found, "\n".join(found) + "\n  " + json.dumps(message)[:300]
