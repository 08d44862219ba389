"""A client in 10 lines: `python examples/client_quickstart.py http://127.0.0.1:8000/mcp`."""

import asyncio
import sys

from mcpkit.client import Client


async def main(target: str) -> None:
    async with Client(
        target, elicitation=lambda q: {"action": "accept", "content": q.defaults()}
    ) as client:
        print(
            "connected to", client.info.name if client.info else "?", "over the", client.era, "wire"
        )
        for tool in await client.list_tools():
            print(f"- {tool.name}: {tool.description}")
        print((await client.call_tool("forecast", {"city": "Oslo", "days": 1})).text)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
