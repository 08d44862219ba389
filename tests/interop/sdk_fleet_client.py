"""Runs inside the interop venv (the official `mcp` 2.3.0 SDK): drives `mcpkit gateway` in front
of published npm servers over Streamable HTTP (no auth: loopback) and prints what it saw as one
JSON object. The SDK validates every result against its era's types.

    python sdk_fleet_client.py URL auto|legacy DIRECTORY
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client


def text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def main() -> None:
    url, mode, directory = sys.argv[1:4]
    seen: dict[str, Any] = {}
    http = httpx2.AsyncClient(timeout=60)
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        seen["protocolVersion"] = client.protocol_version
        tools = await client.list_tools()
        seen["tools"] = sorted(t.name for t in tools.tools)
        resources = await client.list_resources()
        seen["resources"] = sorted(str(r.uri) for r in resources.resources)
        templates = await client.list_resource_templates()
        seen["templates"] = sorted(t.uri_template for t in templates.resource_templates)
        prompts = await client.list_prompts()
        seen["prompts"] = sorted(p.name for p in prompts.prompts)
        calls = {
            "echo": ("everything__echo", {"message": "hi"}),
            "structured": ("everything__get-structured-content", {"location": "New York"}),
            "links": ("everything__get-resource-links", {"count": 2}),
            "listing": ("filesystem__list_directory", {"path": directory}),
            "graph": ("memory__read_graph", {}),
            "search": ("quirky__search", {"query": "milk"}),
        }
        for key, (name, arguments) in calls.items():
            result = await client.call_tool(name, arguments)
            seen[key] = [bool(result.is_error), text(result)]
        first = next(u for u in seen["resources"] if u.startswith("everything+"))
        read = await client.read_resource(first)
        seen["read"] = [first, len(read.contents)]
        simple = next(p for p in prompts.prompts if p.name.startswith("everything__simple"))
        prompt = await client.get_prompt(simple.name, {})
        seen["prompt"] = [simple.name, len(prompt.messages)]
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main())
