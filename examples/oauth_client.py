"""A client for OAuth-protected servers: `python examples/oauth_client.py URL`.

The first run opens the browser once; tokens are kept per authorization server in the file, so
later runs (and restarts) refresh silently.
"""

import asyncio
import sys

from mcpkit.auth import AuthorizationCode, FileTokenStore, LoopbackAuthorizer, OAuth
from mcpkit.client import Client


def make_client(url: str, token_file: str = "~/.config/mcpkit/tokens.json") -> Client:
    grant = AuthorizationCode(LoopbackAuthorizer())
    return Client(url, auth=OAuth(grant, store=FileTokenStore(token_file)))


async def main(url: str) -> None:
    async with make_client(url) as client:
        print(await client.call_tool("my_orders"))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
