"""End to end over loopback: an mcpkit server protected by the JWT verifier (keys from the test
authorization server's JWKS), an mcpkit client that discovers, registers, authorizes, calls a
scoped tool, steps up on a 403, and after a restart refreshes from its token file without any
user interaction (the official SDK's #3250)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated

import pytest
import uvicorn

from mcpkit import Context, Server
from mcpkit.auth import (
    AuthorizationCode,
    BearerAuth,
    FileTokenStore,
    FromPrincipal,
    HeadlessAuthorizer,
    JWTVerifier,
    OAuth,
)
from mcpkit.client import Client
from oauth_server import LocalAuthServer, loopback_socket
from support import scaled

ORDERS = {"alice": ["o-1", "o-2"], "bob": ["o-9"]}


def make_server() -> Server:
    server = Server("orders")

    @server.tool(scopes=["orders:read"])
    async def my_orders(customer_id: Annotated[str, FromPrincipal("sub")]) -> str:
        """The caller's orders (the customer is the token's subject)."""
        return f"{customer_id}: {' '.join(ORDERS.get(customer_id, []))}"

    @server.tool(scopes=["orders:write"])
    async def cancel_order(order_id: str, ctx: Context) -> str:
        """Cancel one of the caller's orders."""
        assert ctx.auth is not None
        return f"{ctx.principal} cancelled {order_id} with {' '.join(sorted(ctx.auth.scopes))}"

    @server.tool()
    async def whoami(ctx: Context) -> str:
        """Who the token says the caller is."""
        return str(ctx.principal)

    return server


class Stack:
    def __init__(self, tmp: Path) -> None:
        self.auth_server = LocalAuthServer()
        self.sock = loopback_socket()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/mcp"
        self.token_file = tmp / "tokens.json"
        verifier = JWTVerifier(
            issuer=self.auth_server.issuer, audience=self.url, jwks_uri=self.auth_server.jwks_uri
        )
        auth = BearerAuth(
            verifier,
            resource=self.url,
            authorization_servers=[self.auth_server.issuer],
            scopes_supported=["orders:read"],
        )
        app = make_server().http_app(auth=auth)
        config = uvicorn.Config(app, lifespan="on", log_level="warning", access_log=False)
        self.uvicorn = uvicorn.Server(config)
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.auth_server.start()
        self.task = asyncio.create_task(self.uvicorn.serve(sockets=[self.sock]))

    async def close(self) -> None:
        self.uvicorn.should_exit = True
        if self.task is not None:
            await self.task
        await self.auth_server.close()

    def client(self) -> Client:
        oauth = OAuth(
            AuthorizationCode(HeadlessAuthorizer("http://127.0.0.1:1/callback")),
            store=FileTokenStore(self.token_file),
        )
        return Client(self.url, auth=oauth, timeout=scaled(20))


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Stack]:
    s = Stack(tmp_path)
    await s.start()
    try:
        yield s
    finally:
        await s.close()


async def test_authorize_step_up_and_refresh_after_restart(stack: Stack) -> None:
    calls = stack.auth_server.calls
    async with stack.client() as client:
        # AUTH-DISC-04/05, AUTH-06, AUTH-REG-05, AUTH-17: 401 → discovery → DCR → authorize.
        assert await client.call_tool("whoami") is not None
        first = stack.auth_server.requests[0]
        assert first["scope"] == "orders:read offline_access"  # AUTH-11, AUTH-26
        assert first["resource"] == stack.url
        # Lists filtered by the token's scopes, answered private (issue 6).
        raw = await client.request("tools/list", use_cache=False)
        assert [t["name"] for t in raw["tools"]] == ["my_orders", "whoami"]
        assert raw["cacheScope"] == "private"
        # The customer comes from the token, never from arguments.
        assert (await client.call_tool("my_orders")).text == "alice: o-1 o-2"
        forged = await client.call_tool("my_orders", {"customer_id": "bob"})
        assert forged.is_error and "unexpected argument 'customer_id'" in forged.text
        # A tool that reads the caller from Context is not fooled by an argument either.
        forged = await client.call_tool("whoami", {"customer_id": "bob"})
        assert forged.is_error and "unexpected argument 'customer_id'" in forged.text
        # AUTH-29/31: 403 insufficient_scope → step-up with the union of scopes.
        result = await client.call_tool("cancel_order", {"order_id": "o-1"})
        assert result.text == ("alice cancelled o-1 with offline_access orders:read orders:write")
        second = stack.auth_server.requests[1]
        assert set(second["scope"].split()) == {"orders:read", "orders:write", "offline_access"}
        assert calls["authorize"] == 2 and calls["register"] == 1
        raw = await client.request("tools/list", use_cache=False)
        assert [t["name"] for t in raw["tools"]] == ["my_orders", "cancel_order", "whoami"]

    # The client is down long enough for its access token to expire (AUTH-REG-07: keyed by
    # issuer in the file).
    stored = json.loads(stack.token_file.read_text())
    assert list(stored) == [stack.auth_server.issuer]
    for token in stored[stack.auth_server.issuer]["tokens"].values():
        token["expires_at"] = 0
    stack.token_file.write_text(json.dumps(stored))

    async with stack.client() as client:
        result = await client.call_tool("cancel_order", {"order_id": "o-2"})
        assert result.text.startswith("alice cancelled o-2")
    assert calls["authorize"] == 2  # no user interaction after the restart
    assert calls["register"] == 1  # the stored registration for this issuer is kept
    assert calls["token:refresh_token"] == 1
