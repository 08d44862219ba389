"""A per-user authorization a plain browser completes (issue 31, item 5; ELIC-18/23/32): the
URL the user gets is the gateway's page, which signs the browser in at the front's
authorization server (`auth.clientId`) and sends only the flow's owner on to the backend's;
the browser is an HTTP client keeping cookies, with no `Authorization` header."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcpkit.auth import BearerAuth, JWTVerifier
from mcpkit.client.inputs import Elicitation
from per_user_support import KEY, Browser, Stack, running_stack


@pytest.fixture
async def stack() -> AsyncIterator[Stack]:
    async with running_stack() as running:
        yield running


@contextlib.asynccontextmanager
async def signing_in(stack: Stack) -> AsyncIterator[str]:
    """A gateway that signs browsers in at the front's authorization server (`clientId`)."""
    await stack.front_as.start()
    async with stack.serving_gateway(clientId="gw-web") as url:
        yield url


async def alice_reaches_the_backend(stack: Stack, ask: Any) -> None:
    """Alice calls through the gateway with sign-in on; `ask` plays her browser."""
    async with signing_in(stack), stack.user("alice", ask=ask) as alice:
        assert (await alice.call_tool("orders__whoami", {})).text == "alice"


async def test_a_plain_browser_completes_its_users_flow_by_signing_in_at_the_front(
    stack: Stack,
) -> None:
    pages: list[tuple[int, str]] = []
    async with Browser("alice") as web:

        async def ask(request: Elicitation) -> dict[str, Any]:
            assert request.url is not None
            pages.append(await web.follow(request.url))  # no Authorization header anywhere
            return {"action": "accept"}

        await alice_reaches_the_backend(stack, ask)
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
        [cookie] = [c for c in web.set_cookies if c.startswith("mcpkit_gateway_user=")]
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

        await alice_reaches_the_backend(stack, ask)
    assert [status for status, _ in seen] == [403, 403, 200]
    assert "another user" in seen[0][1] and "clientId" not in seen[0][1]
    assert stack.front_as.calls["authorize"] == 2


async def test_a_sign_in_answer_opened_in_another_browser_signs_nobody_in(
    stack: Stack,
) -> None:
    """Login CSRF: bob's sign-in answer (his code), sent to alice, does not make her bob."""
    seen: list[tuple[int, str]] = []
    async with Browser("bob") as bob_web, Browser("alice") as alice_web:

        async def ask(request: Elicitation) -> dict[str, Any]:
            assert request.url is not None
            signed_in = stack.gateway_url.removesuffix("/mcp") + "/oauth/signed-in"
            status, answer = await bob_web.follow(request.url, until=signed_in)
            assert status == 302 and answer.startswith(signed_in)
            seen.append(await alice_web.follow(answer))
            seen.append(await alice_web.follow(request.url))  # she signs in as herself
            return {"action": "accept"}

        await alice_reaches_the_backend(stack, ask)
    assert [status for status, _ in seen] == [400, 200]
    assert "not started in this browser" in seen[0][1]
    assert stack.front_as.calls["token:authorization_code"] == 1  # bob's code never redeemed


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

        await alice_reaches_the_backend(stack, ask)
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
