"""One masking rule for every kind of handler: an unexpected exception from a resource, a
resource template, a prompt or the completion handler is the masked -32603 with a reference
id that is also in the one log record carrying the traceback (as tools do: test_tool_failures).
`ResourceNotFound` and `PromptNotFound`, raised by handlers, are answered as each wire asks."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest

from legacy_support import session
from mcpkit import Server
from mcpkit.server import PromptNotFound, ResourceNotFound
from support import ask

SECRET = "db password=hunter2 at 10.0.0.5"


def failing_server(**options: Any) -> Server:
    server = Server("db", **options)

    @server.resource("db://config")
    def config() -> str:
        raise RuntimeError(SECRET)

    @server.resource("db://rows/{row}")
    def row(row: str) -> str:
        if row == "missing":
            raise ResourceNotFound(f"db://rows/{row}")
        raise RuntimeError(SECRET)

    @server.prompt()
    def report(kind: str) -> str:
        if kind == "missing":
            raise PromptNotFound(f"report/{kind}")
        raise RuntimeError(SECRET)

    @server.completion()
    def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        raise RuntimeError(SECRET)

    return server


FAILURES = {
    "resource": ("resources/read", {"uri": "db://config"}, "resource 'db://config'"),
    "template": ("resources/read", {"uri": "db://rows/7"}, "resource template 'db://rows/{row}'"),
    "prompt": ("prompts/get", {"name": "report", "arguments": {"kind": "x"}}, "prompt 'report'"),
    "completion": (
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "report"},
            "argument": {"name": "kind", "value": ""},
        },
        "completion 'report'",
    ),
}


@pytest.mark.parametrize("kind", list(FAILURES))
async def test_an_unexpected_exception_is_masked_with_a_logged_reference(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    method, params, logged = FAILURES[kind]
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        error = await ask(failing_server(), method, params)
    assert error["code"] == -32603  # RES-13, PRM-08: internal errors are -32603
    assert "hunter2" not in str(error) and "internal error (reference " in error["message"]
    ref = re.search(r"reference ([0-9a-f]{8})", error["message"])
    assert ref is not None and error["data"] == {"reference": ref.group(1)}
    (record,) = [r for r in caplog.records if r.name == "mcpkit.server"]
    assert record.getMessage() == f"{logged} failed (reference {ref.group(1)})"
    assert record.exc_info is not None and SECRET in caplog.text


async def test_unmasked_the_client_sees_the_exception_and_the_reference() -> None:
    error = await ask(failing_server(mask_errors=False), "resources/read", {"uri": "db://config"})
    assert error["code"] == -32603
    assert f"RuntimeError: {SECRET} (reference " in error["message"]


async def test_a_handlers_resource_not_found_is_minus_32602_with_the_uri() -> None:
    error = await ask(failing_server(), "resources/read", {"uri": "db://rows/missing"})
    assert error["code"] == -32602  # RES-13, BASE-20: never -32002 on the modern wire
    assert error["data"] == {"uri": "db://rows/missing"}


async def test_a_handlers_resource_not_found_is_minus_32002_on_a_2025_session() -> None:
    async with session(failing_server().http_app()) as client:
        reply = await client.request("resources/read", {"uri": "db://rows/missing"})
    assert reply["error"]["code"] == -32002  # RES-14: the legacy code on the legacy wire
    assert reply["error"]["data"] == {"uri": "db://rows/missing"}


async def test_prompt_not_found_is_minus_32602_with_the_name() -> None:
    server = failing_server()
    error = await ask(server, "prompts/get", {"name": "nope"})
    assert (error["code"], error["data"]) == (-32602, {"name": "nope"})  # PRM-08
    error = await ask(server, "prompts/get", {"name": "report", "arguments": {"kind": "missing"}})
    assert (error["code"], error["data"]) == (-32602, {"name": "report/missing"})
