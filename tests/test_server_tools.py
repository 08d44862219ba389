"""Tool registration from type hints, validation, results (TOOL-*), over the memory transport."""

from __future__ import annotations

import threading
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from mcpkit import (
    CallToolResult,
    Context,
    ImageContent,
    Server,
    TextContent,
    ToolAnnotations,
    ToolError,
)
from mcpkit.server.transports.memory import MemoryTransport
from support import meta, record


async def call(
    server: Server, method: str, params: dict[str, Any] | None = None, **meta_extra: Any
) -> Any:
    transport = MemoryTransport(server, trace=record)
    p = dict(params or {})
    p["_meta"] = meta(**meta_extra)
    resp = await transport.request(1, method, p)
    return resp.result if resp.error is None else resp.error


class Address(BaseModel):
    street: str
    city: str = "Springfield"


def test_schema_from_hints() -> None:
    server = Server("t")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True), title="Lookup")
    def lookup(
        name: Annotated[str, Field(description="Who")],
        address: Address,
        limit: int = 10,
        tag: str | None = None,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        """Find someone."""
        return {}

    d = server.tools["lookup"].definition
    assert d["description"] == "Find someone." and d["title"] == "Lookup"
    assert d["annotations"] == {"readOnlyHint": True}
    schema = d["inputSchema"]
    assert schema["type"] == "object" and schema["additionalProperties"] is False  # TOOL-10/11
    assert schema["required"] == ["name", "address"]
    assert schema["properties"]["name"] == {"description": "Who", "type": "string"}
    assert schema["properties"]["tag"] == {"type": "string"}  # optional, not nullable
    assert schema["properties"]["address"] == {"$ref": "#/$defs/Address"}
    assert "Address" in schema["$defs"]
    assert "ctx" not in schema["properties"]
    assert d["outputSchema"] == {"additionalProperties": True, "type": "object"}


def test_invalid_and_duplicate_names() -> None:
    server = Server("t")
    with pytest.raises(ValueError, match="TOOL-13"):
        server.tool(name="has space")(lambda: "")
    server.tool(name="ok")(lambda: "")
    with pytest.raises(ValueError, match="already registered"):
        server.tool(name="ok")(lambda: "")


def test_invalid_x_mcp_header_is_refused_at_registration() -> None:
    server = Server("t")
    with pytest.raises(ValueError):

        @server.tool()
        def bad(x: Annotated[float, Field(json_schema_extra={"x-mcp-header": "X"})]) -> str:
            """Numbers cannot be mirrored (TR-XMH-05)."""
            return ""


async def test_structured_output() -> None:
    server = Server("t")

    @server.tool()
    async def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @server.tool()
    async def person() -> Address:
        """A model."""
        return Address(street="Main")

    res = await call(server, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    assert res["structuredContent"] == 5 and res["content"] == [
        {"type": "text", "text": "5"}
    ]  # TOOL-16
    res = await call(server, "tools/call", {"name": "person"})
    assert res["structuredContent"] == {"street": "Main", "city": "Springfield"}
    assert server.tools["person"].definition["outputSchema"]["required"] == ["street"]


async def test_content_returns() -> None:
    server = Server("t")

    @server.tool()
    async def pic() -> list[Any]:
        """Content blocks."""
        return [TextContent("hi"), ImageContent("AAAA", "image/png")]

    @server.tool()
    async def full() -> CallToolResult:
        """Full control."""
        return CallToolResult([TextContent("x")], structured_content={"k": 1}, is_error=True)

    res = await call(server, "tools/call", {"name": "pic"})
    assert [c["type"] for c in res["content"]] == ["text", "image"]
    assert "structuredContent" not in res
    res = await call(server, "tools/call", {"name": "full"})
    assert res["isError"] is True and res["structuredContent"] == {"k": 1}


async def test_errors_become_tool_results() -> None:
    server = Server("t")

    @server.tool()
    async def boom() -> str:
        """Fails."""
        raise RuntimeError("disk on fire")

    @server.tool()
    async def polite() -> str:
        """Fails politely."""
        raise ToolError("try a smaller number")

    @server.tool()
    async def needs(a: int) -> str:
        """Needs a."""
        return str(a)

    res = await call(server, "tools/call", {"name": "boom"})
    text = res["content"][0]["text"]  # masked by default: a reference, not the exception
    assert res["isError"] is True and "internal error (reference " in text
    assert "disk on fire" not in text
    res = await call(server, "tools/call", {"name": "polite"})
    assert res["content"][0]["text"] == "try a smaller number"
    res = await call(server, "tools/call", {"name": "needs", "arguments": {"b": 1}})
    text = res["content"][0]["text"]
    assert "missing required argument 'a'" in text and "unexpected argument 'b'" in text


async def test_sync_tools_run_off_the_loop() -> None:
    server = Server("t")
    loop_thread = threading.get_ident()

    @server.tool()
    def where() -> bool:
        """Which thread."""
        return threading.get_ident() != loop_thread

    res = await call(server, "tools/call", {"name": "where"})
    assert res["structuredContent"] is True


async def test_context_reports_meta() -> None:
    server = Server("t")

    @server.tool()
    async def who(ctx: Context) -> dict[str, Any]:
        """Who is asking."""
        return {
            "client": ctx.client_info,
            "caps": ctx.client_capabilities,
            "version": ctx.protocol_version,
        }

    res = await call(server, "tools/call", {"name": "who"})
    assert res["structuredContent"] == {
        "client": {"name": "tests", "version": "0"},
        "caps": {},
        "version": "2026-07-28",
    }


async def test_memory_transport_notifications() -> None:
    server = Server("t")
    seen: list[Any] = []

    @server.tool()
    async def work(ctx: Context) -> str:
        """Reports progress."""
        await ctx.report_progress(1, 2)
        await ctx.report_progress(1, 2)  # PROG-04: not increasing → dropped
        await ctx.report_progress(2, 2)
        return "done"

    transport = MemoryTransport(server, lambda n: seen.append(n.params), trace=record)
    p = {"name": "work", "_meta": meta(progressToken=9)}
    resp = await transport.request(1, "tools/call", p)
    assert resp.result["content"][0]["text"] == "done"
    assert [s["progress"] for s in seen] == [1, 2]


async def test_unknown_and_legacy_on_memory() -> None:
    server = Server("t")
    err = await call(server, "ping")
    assert err["code"] == -32601
    transport = MemoryTransport(server, trace=record)
    resp = await transport.request(2, "tools/list", {})
    assert resp.error["code"] == -32602  # BASE-46


def test_registration_keeps_the_task_and_scope_flags_without_rescanning() -> None:
    # An addition can only turn `serves_tasks` / `any_scopes` on (registering 10,000 tools used
    # to rescan every tool per registration: 13 s; now 0.6 s); a removal may turn them off, and
    # then everything is looked at again.
    from mcpkit.server.tools import Tool

    server = Server("flags")

    async def plain(text: str) -> str:
        return text

    assert not server.serves_tasks and not server.any_scopes
    server.add_tool(Tool(plain, name="a"))
    assert not server.serves_tasks and not server.any_scopes
    server.add_tool(Tool(plain, name="b", task="optional", scopes=["admin"]))
    assert server.serves_tasks and server.any_scopes
    server.remove_tool("b")
    assert not server.serves_tasks and not server.any_scopes
    server.add_tool(Tool(plain, name="c", task="required"))
    assert server.serves_tasks
    server.remove_tool("c")
    assert not server.serves_tasks
