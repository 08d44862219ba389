"""Runs inside the interop venv (the official `mcp` 1.x SDK, a 2025-era client): drives an
mcpkit server over stdio or Streamable HTTP and prints what it saw as one JSON object.

    python sdk_client.py stdio <python> <server.py>
    python sdk_client.py http <url>
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import AsyncExitStack
from typing import Any

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError


async def drive(session: ClientSession, seen: dict[str, Any]) -> None:
    init = await session.initialize()
    seen["protocolVersion"] = init.protocolVersion
    seen["serverName"] = init.serverInfo.name
    await session.send_ping()
    tools = await session.list_tools()
    seen["tools"] = [t.name for t in tools.tools]
    await session.set_logging_level("debug")
    # The same tool a modern (MRTR) test drives: here its question is a real elicitation/create.
    result = await session.call_tool("test_input_required_result_elicitation", {})
    seen["elicitation"] = result.content[0].text  # type: ignore[union-attr]
    result = await session.call_tool("test_sampling", {"prompt": "Capital of France?"})
    seen["sampling"] = result.content[0].text  # type: ignore[union-attr]
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
    seen["progress"] = progress
    await session.call_tool("test_tool_with_logging", {})
    read = await session.read_resource("test://static-text")  # type: ignore[arg-type]
    seen["resource"] = read.contents[0].text  # type: ignore[union-attr]
    try:
        await session.read_resource("test://missing")  # type: ignore[arg-type]
    except McpError as exc:
        seen["missingResourceCode"] = exc.error.code
    prompt = await session.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
    seen["prompt"] = prompt.messages[0].content.text  # type: ignore[union-attr]


async def main() -> None:
    seen: dict[str, Any] = {"logs": [], "elicited": []}

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen["elicited"].append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ann"})

    async def on_sample(context: Any, params: types.CreateMessageRequestParams) -> Any:
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Paris"),
            model="interop-model",
        )

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        seen["logs"].append(params.data)

    async with AsyncExitStack() as stack:
        if sys.argv[1] == "stdio":
            params = StdioServerParameters(command=sys.argv[2], args=[sys.argv[3], "--stdio"])
            read, write = await stack.enter_async_context(stdio_client(params))
        else:
            read, write, _ = await stack.enter_async_context(streamablehttp_client(sys.argv[2]))
        session = await stack.enter_async_context(
            ClientSession(
                read,
                write,
                elicitation_callback=on_elicit,
                sampling_callback=on_sample,
                logging_callback=on_log,
            )
        )
        await asyncio.wait_for(drive(session, seen), 30)
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main())
