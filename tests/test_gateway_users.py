"""Users stay apart behind the gateway: two front callers with different tokens, one backend
that sees only the gateway. Host-owned identity comes from each caller's token; tasks,
state handles, requestState and legacy sessions are each caller's own."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway_support import serving
from mcpkit.client import Client
from mcpkit.gateway import Gateway, front_auth
from mcpkit.host import parse_config
from mcpkit.protocol.errors import MCPError
from support import ROOT

sys.path.insert(0, str(ROOT / "tests/servers"))
from proxy_backend import build

TOKENS = {"alice": "tok-alice", "bob": "tok-bob"}


def gateway_for(url: str, *, idempotency: Any = ..., **entry: Any) -> Gateway:
    config = parse_config(
        {
            "gateway": {"auth": {"tokens": [{"token": t, "sub": s} for s, t in TOKENS.items()]}},
            "mcpServers": {
                "app": {
                    "url": url,
                    "trusted": True,
                    "consent": {"allow": ["*"]},
                    "hostOwned": {"customer_id": "{sub}"},
                    **entry,
                }
            },
        },
        env={},
    )
    options = {} if idempotency is ... else {"idempotency": idempotency}
    return Gateway(config, **options)


@pytest.fixture
async def front() -> AsyncIterator[str]:
    async with serving(build()) as url:
        gateway = gateway_for(url)
        async with serving(gateway, auth=front_auth(gateway.settings, "http://x/mcp")) as front:
            yield front


def as_user(url: str, who: str, **options: Any) -> Client:
    return Client(url, headers={"Authorization": f"Bearer {TOKENS[who]}"}, **options)


async def test_host_owned_identity_comes_from_each_callers_token(front: str) -> None:
    async with as_user(front, "alice") as alice, as_user(front, "bob") as bob:
        schema = {t.name: t for t in await alice.list_tools()}["app__whoami"].input_schema
        assert "customer_id" not in schema.get("properties", {})
        assert (await alice.call_tool("app__whoami", {})).text == "alice"
        assert (await bob.call_tool("app__whoami", {})).text == "bob"
        forged = await bob.call_tool("app__whoami", {"customer_id": "alice"})
        assert forged.is_error and "can only be set by the gateway" in forged.text


async def test_handles_are_each_callers_own(front: str) -> None:
    async with as_user(front, "alice") as alice, as_user(front, "bob") as bob:
        opened = await alice.call_tool("app__open_basket", {})
        handle = opened.structured_content["basket_id"]
        assert handle.startswith("basket_") and handle in opened.text
        assert (await alice.call_tool("app__basket", {"basket_id": handle})).structured_content == {
            "items": []
        }
        stolen = await bob.call_tool("app__basket", {"basket_id": handle})
        assert stolen.is_error and "basket" in stolen.text  # unknown to the backend
        again = await alice.call_tool("app__open_basket", {})
        assert again.structured_content["basket_id"] != handle


async def test_tasks_are_each_callers_own(front: str) -> None:
    async with as_user(front, "alice") as alice, as_user(front, "bob") as bob:
        created = await alice.request("tools/call", {"name": "app__job"}, raw=True)
        assert created["resultType"] == "task"
        task_id = created["taskId"]
        assert (await alice.request("tasks/get", {"taskId": task_id}, use_cache=False))[
            "taskId"
        ] == task_id
        for method, extra in (
            ("tasks/get", {}),
            ("tasks/cancel", {}),
            ("tasks/update", {"inputResponses": {"x": {"action": "decline"}}}),
        ):
            with pytest.raises(MCPError) as refused:  # TASK-19: as if it did not exist
                await bob.request(method, {"taskId": task_id, **extra}, use_cache=False)
            assert refused.value.code == -32602
        await alice.request("tasks/cancel", {"taskId": task_id}, use_cache=False)


async def test_request_state_is_each_callers_own(front: str) -> None:
    """MRTR-10: bob cannot continue alice's round with her requestState."""
    caps = {"elicitation": {}}
    async with (
        as_user(front, "alice", elicitation=lambda r: {}) as alice,
        as_user(front, "bob") as bob,
    ):
        first = await alice.request("tools/call", {"name": "app__greet"}, raw=True)
        assert first["resultType"] == "input_required"
        [key] = first["inputRequests"]
        retry = {
            "name": "app__greet",
            "inputResponses": {key: {"action": "accept", "content": {"name": "Eve"}}},
            "requestState": first["requestState"],
            "_meta": {"io.modelcontextprotocol/clientCapabilities": caps},
        }
        with pytest.raises(MCPError) as refused:
            await bob.request("tools/call", retry, raw=True)
        assert refused.value.code == -32602 and "principal" in refused.value.message
        second = await alice.request("tools/call", retry, raw=True)
        assert second["resultType"] == "input_required"  # her round goes on (the city)


async def test_a_legacy_backend_gives_each_caller_a_session() -> None:
    async with serving(build()) as url:
        gateway = gateway_for(url)
        gateway.links["app"].era = "legacy"
        auth = front_auth(gateway.settings, "http://x/mcp")
        async with (
            serving(gateway, auth=auth) as front,
            as_user(front, "alice") as alice,
            as_user(front, "bob") as bob,
        ):
            first = (await alice.call_tool("app__session", {})).text
            assert first not in ("", "none")
            assert (await alice.call_tool("app__session", {})).text == first
            assert (await bob.call_tool("app__session", {})).text not in (first, "none")
            assert (await bob.call_tool("app__whoami", {})).text == "bob"


@pytest.mark.parametrize("front_store", [True, False])
async def test_idempotency_keys_are_each_callers_own(front_store: bool) -> None:
    """The same key from two callers: two runs; each caller's repeat replays their own first
    answer, never the other's. With the gateway's own store the repeat stops at the gateway;
    without it the backend replays it (it got a key of the caller's own, not the raw one)."""
    async with serving(build()) as url:
        gateway = gateway_for(url, **({} if front_store else {"idempotency": None}))
        auth = front_auth(gateway.settings, "http://x/mcp")
        async with (
            serving(gateway, auth=auth) as front,
            as_user(front, "alice") as alice,
            as_user(front, "bob") as bob,
        ):
            first = await alice.call_tool("app__bump", {}, idempotency_key="order-42")
            other = await bob.call_tool("app__bump", {}, idempotency_key="order-42")
            assert (first.text, other.text) == ("1", "2")  # bob's ran: not alice's replayed
            again = await alice.call_tool("app__bump", {}, idempotency_key="order-42")
            assert again.text == "1" and again.raw["_meta"]["dev.mcpkit/idempotentReplay"]
            assert (await bob.call_tool("app__bump", {}, idempotency_key="order-42")).text == "2"
            assert (await alice.call_tool("app__bump", {})).text == "3"  # no key: runs
