"""Per-user credentials through the gateway (issue 31, item 5): a `perUser` backend, protected
by the project's own authorization server fixture, reached by each front user with their own
token, got by the authorization code flow the gateway runs (the user's browser step is this
test following the URL over HTTP), by RFC 8693 token exchange, or from the encrypted store
(memory, or a real redis-server across a gateway restart)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest

from mcpkit.client import Client
from mcpkit.client.inputs import Elicitation
from mcpkit.gateway import Gateway
from mcpkit.host import parse_config
from mcpkit.host.config import ConfigError
from mcpkit.protocol.errors import MCPError
from per_user_support import KEY, Stack, browser, running_stack


@pytest.fixture
async def stack() -> AsyncIterator[Stack]:
    async with running_stack() as running:
        yield running


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
