"""The OAuth client against small loopback servers (CHECKLIST AUTH-*, AUTH-DISC-*, AUTH-REG-*):
what it refuses to do, how often it retries, the loopback redirect listener."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from joserfc import jws

from mcpkit.auth import AuthorizationCode, HeadlessAuthorizer, LoopbackAuthorizer, OAuth
from mcpkit.client import Client, TransportError
from mcpkit.client.errors import AuthorizationError
from oauth_server import LocalAuthServer, loopback_socket

Behaviour = Callable[[web.Request], web.Response | Awaitable[web.Response]]


class FakeMcp:
    """An MCP endpoint whose answers the test decides; PRM at the path-inserted URL."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer
        self.sock = loopback_socket()
        self.base = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.url = f"{self.base}/mcp"
        self.resource = self.url
        self.behaviour: Behaviour = self.challenge
        self.runner: web.AppRunner | None = None

    def challenge(self, request: web.Request) -> web.Response:
        prm = f"{self.base}/.well-known/oauth-protected-resource/mcp"
        return web.json_response(
            {"error": "invalid_token"},
            status=401,
            headers={"WWW-Authenticate": f'Bearer resource_metadata="{prm}", scope="orders:read"'},
        )

    async def start(self) -> None:
        app = web.Application()

        async def mcp(request: web.Request) -> web.Response:
            answer = self.behaviour(request)
            return answer if isinstance(answer, web.Response) else await answer

        async def prm(request: web.Request) -> web.Response:
            return web.json_response(
                {"resource": self.resource, "authorization_servers": [self.issuer]}
            )

        app.router.add_post("/mcp", mcp)
        app.router.add_get("/.well-known/oauth-protected-resource/mcp", prm)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        await web.SockSite(self.runner, self.sock).start()

    async def close(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()


@pytest.fixture
async def servers() -> AsyncIterator[tuple[LocalAuthServer, FakeMcp]]:
    auth = LocalAuthServer()
    await auth.start()
    mcp = FakeMcp(auth.issuer)
    await mcp.start()
    try:
        yield auth, mcp
    finally:
        await mcp.close()
        await auth.close()


def oauth() -> OAuth:
    return OAuth(AuthorizationCode(HeadlessAuthorizer("http://127.0.0.1:1/cb")))


async def test_resource_mismatch_stops_before_authorization(
    servers: tuple[LocalAuthServer, FakeMcp],
) -> None:  # AUTH-18, RFC 9728 §3.3
    auth, mcp = servers
    mcp.resource = "https://evil.example.com/mcp"
    with pytest.raises(AuthorizationError, match=r"evil\.example\.com"):
        async with Client(mcp.url, auth=oauth(), era="modern"):
            pass
    assert auth.calls["metadata"] == 0 and auth.calls["authorize"] == 0


async def test_step_up_is_limited(servers: tuple[LocalAuthServer, FakeMcp]) -> None:  # AUTH-32
    auth, mcp = servers

    def forbidden(request: web.Request) -> web.Response:
        if "Authorization" not in request.headers:
            return mcp.challenge(request)
        header = 'Bearer error="insufficient_scope", scope="orders:write"'
        return web.json_response({}, status=403, headers={"WWW-Authenticate": header})

    mcp.behaviour = forbidden
    with pytest.raises(AuthorizationError, match="after 3 authorizations"):
        async with Client(mcp.url, auth=oauth(), era="modern"):
            pass
    assert auth.calls["authorize"] == 3
    scopes = [r["scope"].split() for r in auth.requests]
    assert scopes[0] == ["orders:read", "offline_access"]
    assert set(scopes[1]) == {"orders:read", "orders:write", "offline_access"}  # AUTH-31


async def test_new_authorization_server_means_new_registration(
    servers: tuple[LocalAuthServer, FakeMcp],
) -> None:  # AUTH-DISC-02, AUTH-REG-07
    first, mcp = servers
    second = LocalAuthServer()
    await second.start()

    async def protected(request: web.Request) -> web.Response:
        body = await request.json()
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if (
            not token
            or json.loads(jws.extract_compact(token.encode()).payload)["iss"] != mcp.issuer
        ):
            return mcp.challenge(request)
        result = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "tools": []}
        return web.json_response({"jsonrpc": "2.0", "id": body["id"], "result": result})

    mcp.behaviour = protected
    try:
        async with Client(mcp.url, auth=oauth(), era="modern") as client:
            assert first.calls["register"] == 1 and first.calls["authorize"] == 1
            mcp.issuer = second.issuer  # the PRM now names another authorization server
            await client.request("tools/list", use_cache=False)
        assert second.calls["register"] == 1  # registered anew there
        assert first.calls["authorize"] == 1 and second.calls["authorize"] == 1
        assert second.requests[0]["client_id"] == "client-1"  # the second server's own id
    finally:
        await second.close()


async def test_401_without_auth_is_not_mistaken_for_legacy(
    servers: tuple[LocalAuthServer, FakeMcp],
) -> None:  # AUTH-DISC-05
    _, mcp = servers
    with pytest.raises(TransportError) as info:
        async with Client(mcp.url):
            pass
    assert info.value.status == 401


async def test_loopback_authorizer_catches_the_redirect() -> None:
    tasks: list[asyncio.Task[Any]] = []

    async def browser(url: str, redirect: str) -> None:
        assert url == "https://as.example/authorize?x=1"
        async with aiohttp.ClientSession() as http, http.get(f"{redirect}?code=c1&state=s1") as r:
            assert r.status == 200

    authorizer = LoopbackAuthorizer(open_browser=False)
    authorizer.announce = lambda url: tasks.append(
        asyncio.create_task(browser(url, authorizer.redirect_uri))
    )
    await authorizer.start()
    try:
        assert authorizer.redirect_uri.startswith("http://127.0.0.1:")
        assert not authorizer.redirect_uri.startswith("http://127.0.0.1:0/")
        response = await authorizer.authorize("https://as.example/authorize?x=1")
        assert response == {"code": "c1", "state": "s1"}
        await asyncio.gather(*tasks)
    finally:
        await authorizer.close()
