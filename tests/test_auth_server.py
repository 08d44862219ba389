"""The MCP server as an OAuth resource server, in process (CHECKLIST AUTH-*, AUTH-DISC-*,
AUTH-SEC-*, TR-HDR-19, MRTR-10): tokens checked per request, challenges, metadata, scopes,
lists filtered per token, the principal in Context and in requestState, FromPrincipal."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

import orjson
import pytest
from aiohttp import web
from joserfc import jwt
from joserfc.jwk import ECKey

from mcpkit import Context, Server
from mcpkit.auth import (
    AccessToken,
    BearerAuth,
    EnvironmentAuth,
    FromPrincipal,
    IntrospectionVerifier,
    InvalidToken,
    JWTVerifier,
)
from mcpkit.protocol.auth_challenge import parse_challenges
from mcpkit.server.auth.access import current_access
from oauth_server import LocalAuthServer, loopback_socket
from support import AsgiClient, headers_for, rpc

RESOURCE = "http://127.0.0.1:8000/mcp"
PRM_URL = "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"
ELICIT = {"elicitation": {}}


class StaticVerifier:
    """Tokens are names: "alice:orders:read,orders:write"."""

    async def verify(self, token: str) -> AccessToken:
        sub, _, scopes = token.partition(":")
        if sub == "bad":
            raise InvalidToken("The access token has expired")
        return AccessToken(sub, frozenset(s for s in scopes.split(",") if s), token=token)


def make_server() -> Server:
    server = Server("shop")

    @server.tool()
    async def whoami(ctx: Context) -> str:
        """The caller."""
        return f"{ctx.principal} {sorted(ctx.auth.scopes) if ctx.auth else None}"

    @server.tool(scopes=["orders:read"])
    async def my_orders(customer_id: Annotated[str, FromPrincipal()]) -> str:
        """The caller's orders."""
        return f"orders of {customer_id}"

    @server.tool(scopes=["orders:write"])
    async def confirm(ctx: Context) -> str:
        """Asks before acting."""
        answer = await ctx.elicit(
            "Sure?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        )
        return f"{ctx.principal}: {answer.action}"

    @server.resource("shop://secret", scopes=["admin"])
    async def secret() -> str:
        return "s3cret"

    return server


def app(**auth_options: Any) -> AsgiClient:
    auth = BearerAuth(
        StaticVerifier(),
        resource=RESOURCE,
        authorization_servers=["https://as.example"],
        scopes_supported=["orders:read"],
        **auth_options,
    )
    return AsgiClient(make_server().http_app(auth=auth))


def bearer(message: dict[str, Any], token: str | None) -> dict[str, str]:
    h = headers_for(message)
    if token is not None:
        h["authorization"] = f"Bearer {token}"
    return h


async def call(client: AsgiClient, token: str | None, method: str, **params: Any) -> Any:
    message = rpc(method, params, caps=ELICIT)
    return await client.post(message, bearer(message, token))


async def test_missing_token_is_challenged_before_parsing() -> None:
    # AUTH-08, AUTH-23, AUTH-DISC-03, TR-HDR-19: 401 even for a body that is not JSON.
    client = app()
    reply = await client.post({}, bearer({"method": "tools/list"}, None), raw=b"{not json")
    assert reply.status == 401
    (c,) = parse_challenges(reply.headers["www-authenticate"])
    assert c.scheme == "Bearer" and c.resource_metadata == PRM_URL
    assert c.scope == ["orders:read"]
    assert orjson.loads(reply.body)["error"] == "invalid_request"


async def test_origin_is_checked_before_the_token() -> None:  # TR-HDR-19
    client = app()
    h = bearer({"method": "tools/list"}, None)
    h["host"] = "evil.example.com"
    reply = await client.post(rpc("tools/list"), h)
    assert reply.status == 403 and "www-authenticate" not in reply.headers


async def test_invalid_token_gets_invalid_token() -> None:  # AUTH-22, AUTH-23, AUTH-28
    reply = await call(app(), "bad", "tools/list")
    assert reply.status == 401
    (c,) = parse_challenges(reply.headers["www-authenticate"])
    assert (
        c.error == "invalid_token" and c.get("error_description") == "The access token has expired"
    )
    reply = await app().post(
        rpc("tools/list"), {**bearer(rpc("tools/list"), None), "authorization": "Basic eDp5"}
    )
    assert reply.status == 401


async def test_protected_resource_metadata() -> None:  # AUTH-04, AUTH-DISC-01, AUTH-DISC-03
    reply = await app().post(
        {},
        {"host": "127.0.0.1:8000"},
        http_method="GET",
        path="/.well-known/oauth-protected-resource/mcp",
    )
    assert reply.status == 200
    doc = orjson.loads(reply.body)
    assert doc["resource"] == RESOURCE
    assert doc["authorization_servers"] == ["https://as.example"]
    assert doc["scopes_supported"] == ["orders:read"]
    with pytest.raises(ValueError):  # AUTH-27
        BearerAuth(
            StaticVerifier(),
            resource=RESOURCE,
            authorization_servers=["x"],
            scopes_supported=["offline_access"],
        )
    with pytest.raises(ValueError):  # AUTH-DISC-01
        BearerAuth(StaticVerifier(), resource=RESOURCE, authorization_servers=[])


async def test_scoped_tool_answers_403_insufficient_scope() -> None:  # AUTH-29, AUTH-30
    client = app()
    reply = await call(client, "alice", "tools/call", name="my_orders", arguments={})
    assert reply.status == 403
    (c,) = parse_challenges(reply.headers["www-authenticate"])
    assert c.error == "insufficient_scope" and c.scope == ["orders:read"]
    assert c.resource_metadata == PRM_URL
    ok = await call(client, "alice:orders:read", "tools/call", name="my_orders", arguments={})
    assert ok.status == 200 and ok.result["content"][0]["text"] == "orders of alice"
    secret = await call(client, "alice:orders:read", "resources/read", uri="shop://secret")
    assert secret.status == 403


async def test_scope_hierarchy_is_honoured() -> None:  # AUTH-33
    client = app(scope_implies={"orders:admin": ["orders:read", "orders:write"]})
    ok = await call(client, "root:orders:admin", "tools/call", name="my_orders", arguments={})
    assert ok.status == 200


async def test_server_wide_required_scopes() -> None:  # AUTH-28
    client = app(required_scopes=["mcp"])
    reply = await call(client, "alice:orders:read", "tools/list")
    assert reply.status == 403
    assert parse_challenges(reply.headers["www-authenticate"])[0].scope == ["mcp"]
    assert (await call(client, "alice:mcp", "tools/list")).status == 200


async def test_lists_are_filtered_per_token_and_private() -> None:
    client = app()
    names = []
    for token in ("alice", "alice:orders:read", "bob:orders:read,orders:write", "alice"):
        reply = await call(client, token, "tools/list")
        assert reply.result["cacheScope"] == "private"
        names.append([t["name"] for t in reply.result["tools"]])
    assert names == [
        ["whoami"],
        ["whoami", "my_orders"],
        ["whoami", "my_orders", "confirm"],
        ["whoami"],
    ]
    reply = await call(client, "alice", "resources/list")
    assert reply.result["resources"] == [] and reply.result["cacheScope"] == "private"
    public = await call(client, "alice", "prompts/list")  # no scoped prompts: stays public
    assert public.status == 404 or public.result["cacheScope"] == "public"


async def test_principal_comes_from_the_token() -> None:
    client = app()
    reply = await call(client, "alice:orders:read", "tools/call", name="whoami", arguments={})
    assert reply.result["content"][0]["text"] == "alice ['orders:read']"
    listed = await call(client, "alice:orders:read", "tools/list")
    schema = next(t for t in listed.result["tools"] if t["name"] == "my_orders")["inputSchema"]
    assert "customer_id" not in schema.get("properties", {})
    forged = await call(
        client,
        "alice:orders:read",
        "tools/call",
        name="my_orders",
        arguments={"customer_id": "bob"},
    )
    assert forged.result["isError"] is True
    assert "unexpected argument 'customer_id'" in forged.result["content"][0]["text"]


def test_from_principal_with_an_explicit_schema() -> None:
    server = Server("x")
    schema = {"type": "object", "properties": {"customer_id": {"type": "string"}}}

    @server.tool(input_schema=schema)
    async def orders(customer_id: Annotated[str, FromPrincipal()]) -> str:
        return customer_id

    async def run(arguments: dict[str, Any]) -> Any:
        token = current_access.set(AccessToken("alice"))
        try:
            return await server.tools["orders"].call(arguments, None)
        finally:
            current_access.reset(token)

    import asyncio

    assert asyncio.run(run({}))["content"][0]["text"] == "alice"
    assert asyncio.run(run({"customer_id": "bob"}))["isError"] is True
    assert asyncio.run(server.tools["orders"].call({}, None))["isError"] is True  # no token


async def test_request_state_is_bound_to_the_principal() -> None:  # MRTR-10
    client = app()
    first = await call(client, "alice:orders:write", "tools/call", name="confirm", arguments={})
    assert first.result["resultType"] == "input_required"
    (key,) = first.result["inputRequests"]
    retry = {
        "name": "confirm",
        "arguments": {},
        "requestState": first.result["requestState"],
        "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
    }
    stolen = await call(client, "mallory:orders:write", "tools/call", **retry)
    assert stolen.code == -32602
    own = await call(client, "alice:orders:write", "tools/call", **retry)
    assert own.result["content"][0]["text"] == "alice: accept"


async def test_environment_auth_for_stdio() -> None:  # BASE-31, AUTH-01
    env = EnvironmentAuth(StaticVerifier(), env_var="SHOP_TOKEN")
    access = await env.authenticate({"SHOP_TOKEN": "carol:orders:read"})
    assert access is not None and access.principal == "carol"
    with pytest.raises(InvalidToken):
        await env.authenticate({})
    assert await EnvironmentAuth(StaticVerifier(), required=False).authenticate({}) is None
    # What serve_stdio does: the connection's token is in every request's context.
    server = make_server()
    current_access.set(access)
    message = {**rpc("tools/call"), "params": {"name": "my_orders", **rpc("x")["params"]}}
    raw = await server.answer(server.admit(orjson.dumps(message)))  # type: ignore[arg-type]
    assert b"orders of carol" in raw


# -- verifiers -------------------------------------------------------------------------------


@pytest.fixture
async def issuer() -> AsyncIterator[LocalAuthServer]:
    server = LocalAuthServer()
    await server.start()
    try:
        yield server
    finally:
        await server.close()


def sign(key: ECKey, kid: str = "k1", **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": "https://as", "aud": RESOURCE, "sub": "alice", "exp": now + 60, **claims}
    return jwt.encode({"alg": "ES256", "kid": kid}, body, key, algorithms=["ES256"])


async def test_jwt_verifier_checks_iss_aud_exp_nbf() -> None:  # AUTH-22, AUTH-25, AUTH-SEC-07
    key = ECKey.generate_key("P-256", parameters={"kid": "k1"})
    jwks = {"keys": [key.as_dict(private=False)]}
    v = JWTVerifier(issuer="https://as", audience=RESOURCE, jwks=jwks)
    token = await v.verify(sign(key, scope="a b", client_id="c"))
    assert token.subject == "alice" and token.scopes == {"a", "b"} and token.client_id == "c"
    upper = await v.verify(sign(key, aud=["https://other", "HTTP://127.0.0.1:8000/mcp"]))
    assert upper.subject == "alice"  # AUTH-19
    now = int(time.time())
    for bad in (
        sign(key, aud="https://evil.example.com/mcp"),
        sign(key, iss="https://evil"),
        sign(key, exp=now - 120),
        sign(key, nbf=now + 600),
        sign(ECKey.generate_key("P-256", parameters={"kid": "k1"})),
        sign(key, kid="unknown"),
        "not-a-jwt",
    ):
        with pytest.raises(InvalidToken):
            await v.verify(bad)


async def test_jwt_verifier_fetches_and_refreshes_the_jwks(issuer: LocalAuthServer) -> None:
    v = JWTVerifier(
        issuer=issuer.issuer, audience=RESOURCE, jwks_uri=issuer.jwks_uri, min_refresh=0
    )
    grant = type("G", (), {"client_id": "c", "scope": "x", "resource": RESOURCE, "sub": "bob"})
    assert (await v.verify(issuer.sign(grant))).subject == "bob"  # type: ignore[arg-type]
    await v.verify(issuer.sign(grant))  # type: ignore[arg-type]
    assert issuer.calls["jwks"] == 1  # cached
    issuer.key = ECKey.generate_key("P-256", parameters={"kid": "k2", "alg": "ES256"})
    rotated = jwt.encode(
        {"alg": "ES256", "kid": "k2"},
        {"iss": issuer.issuer, "aud": RESOURCE, "sub": "bob", "exp": int(time.time()) + 60},
        issuer.key,
    )
    assert (await v.verify(rotated)).subject == "bob"  # unknown kid: fetched again
    assert issuer.calls["jwks"] == 2


async def test_introspection_verifier() -> None:  # AUTH-22 (RFC 7662)
    seen: list[dict[str, str]] = []

    async def introspect(request: web.Request) -> web.Response:
        form = dict(await request.post())
        seen.append({**form, "auth": request.headers.get("Authorization", "")})
        active = {"active": True, "sub": "dave", "scope": "orders:read", "aud": RESOURCE}
        answers = {
            "good": active,
            "other-aud": {**active, "aud": "https://elsewhere"},
            "expired": {**active, "exp": 1},
        }
        return web.json_response(answers.get(form["token"], {"active": False}))

    sock = loopback_socket()
    web_app = web.Application()
    web_app.router.add_post("/introspect", introspect)
    runner = web.AppRunner(web_app, access_log=None)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    try:
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/introspect"
        v = IntrospectionVerifier(url, audience=RESOURCE, client_id="rs", client_secret="pw")
        token = await v.verify("good")
        assert token.subject == "dave" and token.scopes == {"orders:read"}
        await v.verify("good")
        assert len(seen) == 1 and seen[0]["auth"].startswith("Basic ")  # cached
        for bad in ("other-aud", "expired", "revoked"):
            with pytest.raises(InvalidToken):
                await v.verify(bad)
    finally:
        await runner.cleanup()


async def test_stdio_takes_the_credential_from_the_environment() -> None:  # BASE-31, AUTH-01
    import sys
    from pathlib import Path

    from mcpkit.client import Client

    script = str(Path(__file__).with_name("servers") / "env_auth_server.py")
    async with Client([sys.executable, script], env={"SHOP_TOKEN": "erin:orders:read"}) as c:
        assert (await c.call_tool("my_orders")).text == "orders of erin"
        forged = await c.call_tool("my_orders", {"customer_id": "bob"})
        assert forged.is_error


async def test_legacy_session_belongs_to_its_principal() -> None:
    """A 2025-era session opened with alice's token is unknown to bob's (same as a wrong id)."""
    client = app()
    client.era = "2025-11-25"  # a session's answers: checked against that schema
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "host": "127.0.0.1:8000",
        "authorization": "Bearer alice:orders:read",
    }
    opened = await client.post(init, headers)
    assert opened.status == 200
    session = opened.headers["mcp-session-id"]
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    own = {**headers, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    assert (await client.post(listing, own)).status == 200
    other = {**own, "authorization": "Bearer bob:orders:read"}
    assert (await client.post(listing, other)).status == 404
    assert (await client.post(listing, {**own, "authorization": "Bearer alice:"})).status == 200
