"""Every message the server produced anywhere in this test run is valid 2026-07-28 wire.

The tests record what they receive into `support.WIRE`; this module runs last (conftest).
Each message is checked against `JSONRPCMessage` and against the specific definition for its
method: results by the request's method, notifications by their own.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema_rs

from support import ROOT, WIRE, feed_wire_if_alone

DATA = ROOT / "tests/data"  # published schemas, source and licence in tests/data/README.md
SCHEMA = DATA / "schema-2026-07-28.json"
#: The tasks extension's own schema (its shapes are not in the core one).
TASKS_SCHEMA = DATA / "schema-ext-tasks-draft.json"

RESULTS = {
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
}
#: Definitions looked up in the tasks extension's schema.
TASK_DEFINITIONS = {
    "GetTaskResult",
    "UpdateTaskResult",
    "CancelTaskResult",
    "CreateTaskResult",
    "TaskStatusNotification",
}
NOTIFICATIONS = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
    "notifications/tasks": "TaskStatusNotification",
}


@cache
def validator(definition: str) -> Any:
    path = TASKS_SCHEMA if definition in TASK_DEFINITIONS else SCHEMA
    schema = json.loads(path.read_text())
    return jsonschema_rs.validator_for({"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]})


def definitions_for(method: str, message: dict[str, Any]) -> list[str]:
    defs = ["JSONRPCMessage"]
    if "error" in message:
        defs.append("JSONRPCErrorResponse")
    elif "result" in message:
        defs.append("JSONRPCResultResponse")
        if message["result"].get("resultType") == "input_required":
            defs.append("InputRequiredResult")
        elif message["result"].get("resultType") == "task":
            assert method == "tools/call", f"a task answered {method} (TASK-02)"
            defs.append("CreateTaskResult")
        elif method in RESULTS:
            defs.append(RESULTS[method])
    elif "method" in message:
        assert message["method"] in NOTIFICATIONS, (
            f"unexpected server notification {message['method']}"
        )
        defs.append(NOTIFICATIONS[message["method"]])
        assert "id" not in message  # BASE-15
    return defs


#: Test modules whose traffic covers every shape checked below, run here when this module runs
#: alone (in the full suite it runs last, after them: conftest).
FEEDERS = ("test_http_app.py", "test_server_tools.py", "test_subscriptions.py", "test_tasks.py")


def test_every_recorded_server_message_is_schema_valid() -> None:
    feed_wire_if_alone(WIRE, 100, FEEDERS)
    assert len(WIRE) > 100, "the suite recorded too few messages to mean anything"
    failures = []
    kinds: set[str] = set()
    for method, message in WIRE:
        if "error" in message and "id" in message and message["id"] is None:
            # A body refused unread (413, 408) answers `"id": null`, as JSON-RPC 2.0 asks when
            # the id cannot be determined; MCP's schema only knows an absent id.
            message = {k: v for k, v in message.items() if k != "id"}
        for definition in definitions_for(method, message):
            kinds.add(definition)
            value = (
                message["result"]
                if definition in RESULTS.values()
                or definition in ("InputRequiredResult", "CreateTaskResult")
                else message
            )
            errors = [e.message for e in validator(definition).iter_errors(value)]
            if errors:
                failures.append(
                    f"{method} as {definition}: {errors[:3]}\n  {json.dumps(message)[:300]}"
                )
    assert not failures, "\n".join(failures[:20])
    # The run covered the main shapes (so this test can fail when a kind goes missing).
    assert {
        "DiscoverResult",
        "ListToolsResult",
        "CallToolResult",
        "ReadResourceResult",
        "GetPromptResult",
        "JSONRPCErrorResponse",
        "ProgressNotification",
        "SubscriptionsAcknowledgedNotification",
    } <= kinds


def test_the_validator_can_fail() -> None:
    bad = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "x"}]}}
    defs = definitions_for("tools/list", bad)
    assert any(
        not validator(d).is_valid(bad["result"] if d == "ListToolsResult" else bad) for d in defs
    )
