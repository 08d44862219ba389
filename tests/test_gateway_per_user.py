"""Per-user credentials through the gateway (issue 31, item 5): a `perUser` backend, protected
by the project's own authorization server fixture, reached by each front user with their own
token, got by the authorization code flow the gateway runs (the user's browser step is this
test following the URL over HTTP), by RFC 8693 token exchange, or from the encrypted store
(memory, or a real redis-server across a gateway restart)."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

import aiohttp
import pytest

from gateway_support import serving
from mcpkit import Context, Server
from mcpkit.auth import BearerAuth, JWTVerifier
from mcpkit.client import Client
from mcpkit.client.inputs import Elicitation
from mcpkit.gateway import Gateway, front_auth
from mcpkit.host import parse_config
from mcpkit.host.config import ConfigError
from mcpkit.protocol.errors import MCPError
from oauth_server import Grant, LocalAuthServer, loopback_socket

KEY = "mTNqo2t0Ysd6AIQ6Dqg5qHKlfsX1E1BBgTyMtLaHWL4="  # a Fernet key, for tests only


def backend() -> Server:
    server = Server("orders")

    @server.tool()
    async def whoami(ctx: Context) -> str:
        """Who the backend's token says the caller is."""
        return str(ctx.principal)

    return server


class Stack:
    """Two authorization servers (the front's, which signs the users' front tokens, and the
    backend's), an OAuth-protected backend, and gateways in front of it."""

    def __init__(self) -> None:
        self.front_as = LocalAuthServer()
        self.backend_as = LocalAuthServer(scopes=("orders:read", "offline_access"))
        self.backend_sock = loopback_socket()
        self.backend_url = f"http://127.0.0.1:{self.backend_sock.getsockname()[1]}/mcp"
        self.gateway_url = ""
        self.last: Gateway | None = None  # the gateway served last

    async def close(self) -> None:
        await self.front_as.close()  # started only where the gateway signs browsers in
        self.front_as.sock.close()
        await self.backend_as.close()

    def backend_auth(self) -> BearerAuth:
        verifier = JWTVerifier(
            issuer=self.backend_as.issuer,
            audience=self.backend_url,
            jwks_uri=self.backend_as.jwks_uri,
        )
        return BearerAuth(
            verifier,
            resource=self.backend_url,
            authorization_servers=[self.backend_as.issuer],
            scopes_supported=["orders:read"],
        )

    def front_token(self, who: str) -> str:
        return self.front_as.sign(Grant("front-app", "", self.gateway_url, who))

    def gateway(self, url: str, *, open_front: bool = False, **more: Any) -> Gateway:
        """A gateway at `url` whose `orders` backend is `perUser`; it lists the backend's
        catalogue with a service token of its own, and calls with each user's."""
        service = self.backend_as.sign(Grant("gw", "orders:read", self.backend_url, "gateway"))
        per_user = more.pop("perUser", True)
        front_client = more.pop("clientId", None)
        jwks = {"keys": [self.front_as.key.as_dict(private=False)]}
        gateway: dict[str, Any] = {
            "callbackUrl": url.removesuffix("/mcp") + "/oauth/callback",
            "userTokens": {"key": KEY},
            **more,
        }
        if not open_front:
            gateway["auth"] = {
                "resource": url,
                "jwt": {"issuer": self.front_as.issuer, "jwks": jwks},
            }
            if front_client is not None:  # the gateway's own client at the front's server
                gateway["auth"]["clientId"] = front_client
                signed_in = url.removesuffix("/mcp") + "/oauth/signed-in"
                self.front_as.clients[front_client] = [signed_in]
        entry = {
            "url": self.backend_url,
            "trusted": True,
            "consent": {"allow": ["*"]},
            "headers": {"Authorization": f"Bearer {service}"},
            "perUser": per_user,
        }
        return Gateway(parse_config({"gateway": gateway, "mcpServers": {"orders": entry}}, env={}))

    @contextlib.asynccontextmanager
    async def serving_gateway(self, **options: Any) -> AsyncIterator[str]:
        sock = loopback_socket()
        self.gateway_url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        gateway = self.last = self.gateway(self.gateway_url, **options)
        auth = front_auth(gateway.settings, self.gateway_url)
        async with serving(gateway, sock, auth=auth) as url:
            yield url

    def user(self, who: str, *, ask: Any = None, **options: Any) -> Client:
        headers = {"Authorization": f"Bearer {self.front_token(who)}"}
        if ask is not None:
            options.update(elicitation=ask, url_elicitation=True)
        return Client(self.gateway_url, headers=headers, **options)

    async def sign_in(self, url: str, who: str, callback_as: str | None = "") -> tuple[int, str]:
        """The user's browser, signed in as `who` at the authorization servers, follows `url`
        to its end; the gateway's pages get the front token of `callback_as` (default: `who`;
        None: no credential, as a plain browser)."""
        opener = who if callback_as == "" else callback_as
        headers = {"Authorization": f"Bearer {self.front_token(opener)}"} if opener else {}
        async with Browser(who) as http:
            return await http.follow(url, self.gateway_url.removesuffix("/mcp"), headers)


class Browser:
    """A plain HTTP client that keeps cookies like a browser (`user` names who is signed in
    at the test authorization servers) and follows redirects one by one."""

    def __init__(self, who: str) -> None:
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.http.cookie_jar.update_cookies({"user": who})
        self.set_cookies: list[str] = []
        self.visited: list[str] = []

    async def __aenter__(self) -> Browser:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.close()

    async def follow(
        self, url: str, gateway: str = "", headers: dict[str, str] | None = None
    ) -> tuple[int, str]:
        """(status, text) of the page the redirects from `url` end at; `headers` go to the
        gateway's pages only."""
        for _ in range(10):
            self.visited.append(url)
            extra = headers if headers and gateway and url.startswith(gateway) else {}
            async with self.http.get(url, headers=extra, allow_redirects=False) as answer:
                self.set_cookies += answer.headers.getall("Set-Cookie", [])
                if answer.status != 302:
                    return answer.status, await answer.text()
                url = answer.headers["Location"]
        raise AssertionError(f"too many redirects: {self.visited}")


def browser(stack: Stack, who: str) -> Callable[[Elicitation], Awaitable[dict[str, Any]]]:
    """A front client's URL elicitation handler: the user signs in, then accepts."""

    async def ask(request: Elicitation) -> dict[str, Any]:
        assert request.mode == "url" and request.url is not None
        assert request.url.startswith(stack.gateway_url.removesuffix("/mcp") + "/oauth/start/")
        status, text = await stack.sign_in(request.url, who)
        assert status == 200, text
        return {"action": "accept"}

    return ask


@pytest.fixture
async def stack() -> AsyncIterator[Stack]:
    stack = Stack()
    await stack.backend_as.start()
    async with serving(backend(), stack.backend_sock, auth=stack.backend_auth()):
        yield stack
    await stack.close()


async def test_two_users_each_reach_the_backend_with_their_own_token(stack: Stack) -> None:
    async with stack.serving_gateway():
        alice_ask, bob_ask = browser(stack, "alice"), browser(stack, "bob")
        async with (
            stack.user("alice", ask=alice_ask) as alice,
            stack.user("bob", ask=bob_ask) as bob,
        ):
            assert (await alice.call_tool("orders__whoami", {})).text == "alice"
            assert (await bob.call_tool("orders__whoami", {})).text == "bob"
            assert stack.backend_as.calls["token:authorization_code"] == 2
        # stored per user: neither is asked again, and each is still themselves
        async with stack.user("alice") as alice, stack.user("bob") as bob:
            assert (await bob.call_tool("orders__whoami", {})).text == "bob"
            assert (await alice.call_tool("orders__whoami", {})).text == "alice"
        assert stack.backend_as.calls["authorize"] == 2


async def test_an_anonymous_caller_is_refused(stack: Stack) -> None:
    async with stack.serving_gateway(open_front=True), Client(stack.gateway_url) as anonymous:
        result = await anonymous.call_tool("orders__whoami", {})
        assert result.is_error and "anonymous callers are refused" in result.text
        assert stack.backend_as.calls["authorize"] == 0


async def test_a_callback_with_another_users_state_is_refused(stack: Stack) -> None:
    seen: list[tuple[int, str]] = []

    async def ask(request: Elicitation) -> dict[str, Any]:
        assert request.url is not None
        for opener in ("bob", None):  # bob opens alice's callback; then nobody
            seen.append(await stack.sign_in(request.url, "alice", callback_as=opener))
        seen.append(await stack.sign_in(request.url, "alice"))  # alice, her own
        return {"action": "accept"}

    async with stack.serving_gateway(), stack.user("bob") as bob:
        async with stack.user("alice", ask=ask) as alice:
            assert (await alice.call_tool("orders__whoami", {})).text == "alice"
        assert [status for status, _ in seen] == [403, 403, 200]
        assert "another user" in seen[0][1]
        # bob got nothing from it: his own call needs his own authorization
        refused = await bob.call_tool("orders__whoami", {})
        assert refused.is_error and "needs your authorization" in refused.text


async def test_the_url_comes_in_an_error_where_url_elicitation_was_not_declared(
    stack: Stack,
) -> None:
    async with stack.serving_gateway(), stack.user("alice") as alice:
        first = await alice.call_tool("orders__whoami", {})
        assert first.is_error and "needs your authorization" in first.text
        url = next(w for w in first.text.split() if "/oauth/start/" in w)
        assert (await stack.sign_in(url, "alice"))[0] == 200
        assert (await alice.call_tool("orders__whoami", {})).text == "alice"


async def test_a_legacy_client_gets_the_url_elicitation_required_error(stack: Stack) -> None:
    async with stack.serving_gateway(), stack.user("alice", era="legacy") as alice:
        with pytest.raises(MCPError) as needed:
            await alice.call_tool("orders__whoami", {})
        assert needed.value.code == -32042
        [elicitation] = needed.value.data["elicitations"]
        assert elicitation["mode"] == "url" and elicitation["elicitationId"]
        assert (await stack.sign_in(elicitation["url"], "alice"))[0] == 200
        assert (await alice.call_tool("orders__whoami", {})).text == "alice"


async def test_a_legacy_client_declaring_url_elicitation_is_asked(stack: Stack) -> None:
    ask = browser(stack, "alice")
    async with stack.serving_gateway(), stack.user("alice", ask=ask, era="legacy") as alice:
        assert (await alice.call_tool("orders__whoami", {})).text == "alice"


async def test_declining_the_authorization_calls_nothing(stack: Stack) -> None:
    async def decline(request: Elicitation) -> dict[str, Any]:
        return {"action": "decline"}

    async with stack.serving_gateway(), stack.user("alice", ask=decline) as alice:
        result = await alice.call_tool("orders__whoami", {})
        assert result.is_error and "declined" in result.text


async def test_an_expired_token_is_refreshed(stack: Stack) -> None:
    stack.backend_as.token_ttl = 25  # "expired" at once: the client refreshes 30 s early
    alice_ask = browser(stack, "alice")
    async with stack.serving_gateway(), stack.user("alice", ask=alice_ask) as alice:
        assert (await alice.call_tool("orders__whoami", {})).text == "alice"
        before = stack.backend_as.calls["token:refresh_token"]
        assert (await alice.call_tool("orders__whoami", {})).text == "alice"
        assert stack.backend_as.calls["token:refresh_token"] == before + 1
        assert stack.backend_as.calls["authorize"] == 1


async def test_a_token_the_server_refuses_is_dropped_and_refreshed(stack: Stack) -> None:
    async with stack.serving_gateway(), stack.user("alice", ask=browser(stack, "alice")) as alice:
        assert (await alice.call_tool("orders__whoami", {})).text == "alice"
        assert stack.last is not None and stack.last.users is not None
        store = stack.last.users.tokens.of("alice", "orders")
        record = await store.load(stack.backend_as.issuer)
        assert record is not None
        [(resource, tokens)] = record.tokens.items()
        record.tokens[resource] = replace(tokens, access_token="revoked")
        await store.save(stack.backend_as.issuer, record)  # as if revoked at the server
        stack.last.users._users[("orders", "alice")].oauth.tokens = record.tokens[resource]
        refused = await alice.call_tool("orders__whoami", {})
        assert refused.is_error and "did not accept your token" in refused.text
        assert stack.last.links["orders"].up  # one user's token is not the server's health
        assert (await alice.call_tool("orders__whoami", {})).text == "alice"
        assert stack.backend_as.calls["token:refresh_token"] == 1
        assert stack.backend_as.calls["authorize"] == 1


async def test_a_user_forgotten_in_memory_comes_back_from_the_store(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpkit.gateway import per_user

    monkeypatch.setattr(per_user, "MAX_USERS", 1)  # bob's arrival pushes alice out
    alice_ask, bob_ask = browser(stack, "alice"), browser(stack, "bob")
    async with (
        stack.serving_gateway(),
        stack.user("alice", ask=alice_ask) as alice,
        stack.user("bob", ask=bob_ask) as bob,
    ):
        assert (await alice.call_tool("orders__whoami", {})).text == "alice"
        assert (await bob.call_tool("orders__whoami", {})).text == "bob"
        assert (await alice.call_tool("orders__whoami", {})).text == "alice"
    assert stack.backend_as.calls["authorize"] == 2


async def test_token_exchange_needs_no_browser(stack: Stack) -> None:
    stack.backend_as.trusts[stack.front_as.issuer] = stack.front_as.key
    stack.backend_as.token_ttl = 25  # "expired" at once (30 s early): exchanged again
    grant = "token:urn:ietf:params:oauth:grant-type:token-exchange"
    async with (
        stack.serving_gateway(perUser={"tokenExchange": True}),
        stack.user("alice") as alice,
        stack.user("bob") as bob,
    ):
        assert (await alice.call_tool("orders__whoami", {})).text == "alice"
        assert (await bob.call_tool("orders__whoami", {})).text == "bob"
        assert stack.backend_as.calls[grant] == 2
        assert (await alice.call_tool("orders__whoami", {})).text == "alice"
        assert stack.backend_as.calls[grant] == 3
    assert stack.backend_as.calls["authorize"] == 0


async def test_an_untrusted_token_is_not_exchanged(stack: Stack) -> None:
    async with stack.serving_gateway(perUser={"tokenExchange": True}), stack.user("alice") as alice:
        result = await alice.call_tool("orders__whoami", {})
        assert result.is_error and "could not get your token" in result.text


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server on PATH")
async def test_tokens_survive_a_gateway_restart_with_redis(stack: Stack) -> None:
    from processes import RedisProcess

    redis = RedisProcess()
    await redis.start()
    tokens = {"key": KEY, "redis": redis.url, "prefix": "per-user-test:"}
    try:
        alice_ask = browser(stack, "alice")
        async with (
            stack.serving_gateway(userTokens=tokens),
            stack.user("alice", ask=alice_ask) as alice,
        ):
            assert (await alice.call_tool("orders__whoami", {})).text == "alice"
        async with stack.serving_gateway(userTokens=tokens), stack.user("alice") as alice:
            assert (await alice.call_tool("orders__whoami", {})).text == "alice"
        assert stack.backend_as.calls["authorize"] == 1
        import redis.asyncio as aioredis

        reader = aioredis.from_url(redis.url)
        [name] = await reader.keys("per-user-test:*")
        stored = await reader.get(name)
        await reader.aclose()
        assert b"alice" not in name  # Redis keys name no user
        assert b"access_token" not in stored and b"alice" not in stored  # encrypted at rest
    finally:
        await redis.close()


async def test_a_preregistered_client_id_is_used(stack: Stack) -> None:
    async with stack.serving_gateway(perUser={"clientId": "gw-app"}):
        stack.backend_as.clients["gw-app"] = [
            stack.gateway_url.removesuffix("/mcp") + "/oauth/callback"
        ]
        async with stack.user("alice", ask=browser(stack, "alice")) as alice:
            assert (await alice.call_tool("orders__whoami", {})).text == "alice"
    assert stack.backend_as.calls["register"] == 0
    assert stack.backend_as.requests[0]["client_id"] == "gw-app"


@contextlib.asynccontextmanager
async def signing_in(stack: Stack) -> AsyncIterator[str]:
    """A gateway that signs browsers in at the front's authorization server (`clientId`)."""
    await stack.front_as.start()
    async with stack.serving_gateway(clientId="gw-web") as url:
        yield url


async def test_a_plain_browser_completes_its_users_flow_by_signing_in_at_the_front(
    stack: Stack,
) -> None:
    pages: list[tuple[int, str]] = []
    async with Browser("alice") as web:

        async def ask(request: Elicitation) -> dict[str, Any]:
            assert request.url is not None
            pages.append(await web.follow(request.url))  # no Authorization header anywhere
            return {"action": "accept"}

        async with signing_in(stack), stack.user("alice", ask=ask) as alice:
            assert (await alice.call_tool("orders__whoami", {})).text == "alice"
        assert pages[0][0] == 200, pages
        # gateway page, front sign-in, gateway, backend authorization, the callback
        front, backend = stack.front_as.issuer, stack.backend_as.issuer
        assert [u.split("?")[0].startswith((front, backend)) for u in web.visited] == [
            False,
            True,
            False,
            True,
            False,
        ]
        assert stack.front_as.calls["token:authorization_code"] == 1
        [cookie] = web.set_cookies
        assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "alice" not in cookie


async def test_another_signed_in_user_opening_the_url_is_refused_and_the_flow_stays_open(
    stack: Stack,
) -> None:
    seen: list[tuple[int, str]] = []
    async with Browser("bob") as bob_web, Browser("alice") as alice_web:

        async def ask(request: Elicitation) -> dict[str, Any]:
            assert request.url is not None
            seen.append(await bob_web.follow(request.url))  # bob signs in at the front
            seen.append(await bob_web.follow(request.url))  # his cookie: no second trip
            assert stack.front_as.calls["authorize"] == 1
            assert stack.backend_as.calls["authorize"] == 0  # bob never got alice's flow
            seen.append(await alice_web.follow(request.url))
            return {"action": "accept"}

        async with signing_in(stack), stack.user("alice", ask=ask) as alice:
            assert (await alice.call_tool("orders__whoami", {})).text == "alice"
    assert [status for status, _ in seen] == [403, 403, 200]
    assert "another user" in seen[0][1] and "clientId" not in seen[0][1]
    assert stack.front_as.calls["authorize"] == 2


async def test_a_tampered_flow_id_is_refused(stack: Stack) -> None:
    seen: list[tuple[int, str]] = []
    async with Browser("alice") as web:

        async def ask(request: Elicitation) -> dict[str, Any]:
            assert request.url is not None
            base, flow_id = request.url.rsplit("/", 1)
            tampered = flow_id[:-1] + ("A" if flow_id[-1] != "A" else "B")
            seen.append(await web.follow(f"{base}/{tampered}"))
            seen.append(await web.follow(f"{base}/"))
            seen.append(await web.follow(request.url))
            return {"action": "accept"}

        async with signing_in(stack), stack.user("alice", ask=ask) as alice:
            assert (await alice.call_tool("orders__whoami", {})).text == "alice"
    assert [status for status, _ in seen] == [400, 400, 200]
    assert "Unknown or finished authorization" in seen[0][1]


async def test_without_a_front_client_id_a_plain_browser_is_refused_and_told_why(
    stack: Stack,
) -> None:
    seen: list[tuple[int, str]] = []

    async def ask(request: Elicitation) -> dict[str, Any]:
        assert request.url is not None
        seen.append(await stack.sign_in(request.url, "alice", callback_as=None))
        seen.append(await stack.sign_in(request.url, "alice"))  # the header, as a proxy sets
        return {"action": "accept"}

    async with stack.serving_gateway(), stack.user("alice", ask=ask) as alice:
        assert (await alice.call_tool("orders__whoami", {})).text == "alice"
    assert [status for status, _ in seen] == [403, 200]
    assert "no auth.clientId" in seen[0][1]


def test_the_sign_in_cookie_is_short_lived_encrypted_and_secure_on_https() -> None:
    import time

    from mcpkit.gateway.sign_in import COOKIE, COOKIE_TTL_S, SignIn, cookie_key

    auth = BearerAuth(
        JWTVerifier(issuer="https://as", audience="https://gw/mcp", jwks_uri="https://as/jwks"),
        resource="https://gw/mcp",
        authorization_servers=["https://as"],
    )
    sign_in = SignIn(auth, {"clientId": "gw"}, KEY, "https://gw/oauth")
    cookie = sign_in.cookie("alice")
    assert COOKIE_TTL_S == 15 * 60 and f"Max-Age={COOKIE_TTL_S}" in cookie
    assert "; Secure" in cookie and "Path=/oauth" in cookie and "alice" not in cookie
    value = cookie.split(";")[0].encode()
    assert sign_in.who(value) == "alice"
    stale = cookie_key(KEY).encrypt_at_time(b"alice", int(time.time()) - COOKIE_TTL_S - 5)
    assert sign_in.who(f"{COOKIE}={stale.decode()}".encode()) is None
    from cryptography.fernet import Fernet, InvalidToken

    with pytest.raises(InvalidToken):  # the token store's key does not open it
        Fernet(KEY).decrypt(value.split(b"=", 1)[1])
    plain = SignIn(auth, {"clientId": "gw"}, KEY, "http://127.0.0.1:1/oauth")
    assert "Secure" not in plain.cookie("alice")


def test_the_docs_example_is_a_valid_gateway_config() -> None:
    import json
    import re

    from mcpkit.gateway import GatewaySettings
    from support import ROOT

    page = (ROOT / "docs/gateway.md").read_text()
    section = page.split("### Per-user credentials", 1)[1]
    block = re.search(r"```json\n(.*?)```", section, re.DOTALL)
    assert block is not None
    env = {"MCPKIT_GATEWAY_TOKEN_KEY": KEY}
    settings = GatewaySettings.from_config(parse_config(json.loads(block.group(1)), env=env))
    assert settings.backends["tracker"].per_user is not None
    assert settings.user_tokens["key"] == KEY


def test_the_config_says_what_a_per_user_backend_needs() -> None:
    entry = {"orders": {"url": "http://127.0.0.1:1/mcp", "perUser": True}}
    with pytest.raises(ConfigError, match="callbackUrl"):
        Gateway(parse_config({"mcpServers": entry}, env={}))
    redis_only = {"userTokens": {"redis": "redis://127.0.0.1:1/0"}, "callbackUrl": "http://x/cb"}
    with pytest.raises(ConfigError, match="Fernet key"):
        Gateway(parse_config({"gateway": redis_only, "mcpServers": entry}, env={}))
    stdio = {"orders": {"command": "true", "perUser": True}}
    with pytest.raises(ConfigError, match="HTTP servers"):
        Gateway(
            parse_config({"gateway": {"callbackUrl": "http://x/cb"}, "mcpServers": stdio}, env={})
        )
