"""Retry a payment safely: the same idempotency key, one charge."""

import asyncio

from mcpkit import Server
from mcpkit.client import Client
from mcpkit.server.idempotency import MemoryIdempotencyStore

server = Server("payments", idempotency=MemoryIdempotencyStore(ttl_seconds=86400))
charges: list[int] = []


@server.tool()
async def charge(cents: int) -> str:
    """Charge the card on file (not idempotent by itself)."""
    charges.append(cents)
    return f"charged {cents} cents"


async def main() -> None:
    async with Client(server) as client:
        assert client.supports_idempotency
        first = await client.call_tool("charge", {"cents": 1250}, idempotency_key=True)
        # The answer was lost, say: retry with the same key; the card is not charged twice.
        retry = await client.call_tool(
            "charge", {"cents": 1250}, idempotency_key=first.idempotency_key
        )
        print(f"{retry.text} (replayed: {retry.replayed}); charges made: {len(charges)}")


if __name__ == "__main__":
    asyncio.run(main())
