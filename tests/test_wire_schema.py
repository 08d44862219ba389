"""The wire checks every recorded message goes through (`wire_schemas.check`, called by
`support.record` and `legacy_support.record` as each message arrives): they know the shapes
they name, they pass real traffic, and they fail bad messages where they are recorded."""

from __future__ import annotations

from typing import Any

import pytest

from support import AsgiClient, record, rpc
from wire_schemas import (
    LEGACY,
    MODERN,
    RESULTS,
    SCHEMAS,
    SERVER_MESSAGES,
    TASK_DEFINITIONS,
    TASKS_SCHEMA,
    problems,
    schema_defs,
)


@pytest.mark.parametrize("era", [MODERN, LEGACY])
def test_every_definition_named_is_in_its_schema(era: str) -> None:
    named = set(RESULTS[era].values()) | set(SERVER_MESSAGES[era].values())
    core = set(schema_defs(str(SCHEMAS[era])))
    tasks = set(schema_defs(str(TASKS_SCHEMA))) if era == MODERN else set()
    missing = {d for d in named if d not in (tasks if d in TASK_DEFINITIONS else core)}
    assert not missing


async def test_real_answers_pass(client: AsgiClient) -> None:
    for message in (rpc("server/discover"), rpc("tools/list"), rpc("no/such/method")):
        reply = await client.post(message)  # each message recorded, hence checked
        assert reply.messages


def test_the_modern_check_fails_bad_messages() -> None:
    bad: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "x"}]}}
    assert problems(MODERN, "tools/list", bad)  # a tool without inputSchema
    with pytest.raises(AssertionError, match="ListToolsResult"):
        record("tools/list", bad)  # the recording test is the one that fails
    with pytest.raises(AssertionError, match="unexpected server message"):
        record("tools/call", {"jsonrpc": "2.0", "method": "notifications/nonsense"})


def test_the_2025_check_fails_bad_messages() -> None:
    assert problems(LEGACY, "initialize", {"jsonrpc": "2.0", "id": 1, "result": {}})
    bad = {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {"message": "x"}}
    assert problems(LEGACY, "tools/call", bad)
    leaked = {"jsonrpc": "2.0", "id": 2, "result": {"tools": [], "resultType": "complete"}}
    assert any("2026-07-28 fields" in p for p in problems(LEGACY, "tools/list", leaked))  # B.1.5


@pytest.mark.parametrize("era", [MODERN, LEGACY])
def test_an_error_with_a_null_id_fails_both_eras(era: str) -> None:
    """BASE-11: an id that could not be read is left out, never `null`."""
    error = {"code": -32600, "message": "Request body too large"}
    assert problems(era, "tools/call", {"jsonrpc": "2.0", "id": None, "error": error})
    assert not problems(era, "tools/call", {"jsonrpc": "2.0", "error": error})
