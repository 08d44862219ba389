"""The gateway in front of servers as they are published, not as the spec would have them (a
real stdio process, `tests/servers/quirky_legacy_server.py`, one habit per flag), every
answer of the front checked against the schema of the front client's era:

- a 2025-11-25 backend's results get what a 2026-07-28 result needs (`resultType`, BASE-07);
- a tool schema without `"type": "object"` is repaired, one that is no object schema is
  withheld with one warning, and the rest of the list is unharmed (TOOL-10);
- a list method the backend does not serve (-32601) is an empty list, not a failed backend;
- `roots/list` asked outside any call is answered (no roots), with no error logged;
- without authentication, "allow for the rest of the session" belongs to one 2025-11-25
  session and is never offered to anonymous 2026-07-28 callers, who are asked each time.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import orjson
import pytest

from gateway_support import serving
from mcpkit.client import Client
from mcpkit.client.inputs import Elicitation
from mcpkit.gateway import Gateway
from mcpkit.gateway.shapes import completed, repaired_tool
from mcpkit.host import parse_config
from support import LEGACY_HEADERS, ROOT, parse_body, post, record, rpc, scaled

QUIRKY = ROOT / "tests/servers/quirky_legacy_server.py"
V25 = "2025-11-25"


def quirky_gateway(*flags: str) -> Gateway:
    entry = {"command": sys.executable, "args": [str(QUIRKY), *flags], "consent": {"allow": ["*"]}}
    host = {"startupTimeout": scaled(30)}  # serving starts once the backend is up
    return Gateway(parse_config({"host": host, "mcpServers": {"q": entry}}, env={}))


class LegacySession:
    """A 2025-11-25 session on a real front; each message it gets is checked against that
    era's schema (and for 2026-07-28 members that must not leak onto it)."""

    def __init__(self, http: aiohttp.ClientSession, url: str) -> None:
        self.http, self.url = http, url
        self.headers = dict(LEGACY_HEADERS)
        self.ids = 0

    async def open(self) -> None:
        info = {"name": "tests", "version": "0"}
        await self.request(
            "initialize", {"protocolVersion": V25, "capabilities": {}, "clientInfo": info}
        )
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        messages = await self._post(
            {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
        )
        for message in messages:
            record(method, message, V25)
        answer = messages[-1]
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    async def _post(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        async with self.http.post(self.url, data=orjson.dumps(message), headers=self.headers) as r:
            assert r.status in (200, 202), await r.text()
            if "mcp-session-id" in r.headers:
                self.headers["mcp-session-id"] = r.headers["mcp-session-id"]
                self.headers["mcp-protocol-version"] = V25
            body = await r.read()
            return parse_body(r.headers.get("content-type", ""), body) if body else []


@asynccontextmanager
async def front(gateway: Gateway, era: str) -> AsyncIterator[Any]:
    """`ask(method, params) -> result` on the gateway over HTTP, in `era`, every answer
    checked against that era's schema."""
    async with serving(gateway) as url, aiohttp.ClientSession() as http:
        if era == V25:
            session = LegacySession(http, url)
            await session.open()
            yield session.request
            return
        ids = iter(range(1, 1000))

        async def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
            status, messages = await post(
                http, url.removesuffix("/mcp"), rpc(method, params, next(ids))
            )
            assert status == 200 and "result" in messages[-1], messages
            result: dict[str, Any] = messages[-1]["result"]
            return result

        yield ask


LISTS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")


@pytest.mark.parametrize("era", ["2026-07-28", V25])
async def test_a_legacy_backends_results_are_valid_for_either_front(era: str) -> None:
    async with front(quirky_gateway(), era) as ask:  # BASE-07 on 2026-07-28; none on 2025-11-25
        for method in LISTS:
            await ask(method, {})
        called = await ask("tools/call", {"name": "q__echo", "arguments": {"text": "hi"}})
        assert called["content"] == [{"type": "text", "text": "hi"}]
        read = await ask("resources/read", {"uri": "q+notes://today"})
        assert read["contents"][0]["text"] == "buy milk"
        prompt = await ask("prompts/get", {"name": "q__greet", "arguments": {"who": "Ann"}})
        assert prompt["messages"][0]["content"]["text"] == "Hi Ann"


@pytest.mark.parametrize("era", ["2026-07-28", V25])
async def test_a_loose_tool_schema_is_repaired_and_a_bad_one_withheld(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit.gateway")
    async with front(quirky_gateway("loose-schemas"), era) as ask:
        tools = {t["name"]: t for t in (await ask("tools/list", {}))["tools"]}  # TOOL-10
        assert sorted(tools) == [
            "q__echo",
            "q__roots_now",
            "q__roots_seen",
            "q__search",
            "q__toggle",
        ]
        assert tools["q__search"]["inputSchema"] == {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        }
        assert tools["q__toggle"]["inputSchema"]["properties"] == {"on": {}}
        found = await ask("tools/call", {"name": "q__search", "arguments": {"query": "milk"}})
        assert found["content"][0]["text"] == "found: milk"
        await ask("tools/list", {})
    warned = [r.getMessage() for r in caplog.records if "withheld" in r.getMessage()]
    assert len(warned) == 1 and "'scalar'" in warned[0] and "'q'" in warned[0], warned


async def test_a_list_the_backend_does_not_serve_is_empty() -> None:
    gateway = quirky_gateway("no-templates")
    async with front(gateway, "2026-07-28") as ask:
        assert (await ask("resources/templates/list", {}))["resourceTemplates"] == []
        assert [r["uri"] for r in (await ask("resources/list", {}))["resources"]] == [
            "q+notes://today"
        ]
        assert "q__echo" in {t["name"] for t in (await ask("tools/list", {}))["tools"]}
        assert gateway.links["q"].up


async def test_roots_asked_outside_a_call_are_answered_without_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    async with front(quirky_gateway("ask-roots"), "2026-07-28") as ask:
        call = {"name": "q__roots_seen", "arguments": {}}
        seen = "[]"
        async with asyncio.timeout(scaled(10)):
            while seen == "[]":  # the backend asked at start-up: until its answer is in
                seen = (await ask("tools/call", call))["content"][0]["text"]
    assert orjson.loads(seen) == [{"roots": []}]
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == []


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_roots_asked_in_a_call_are_the_calling_clients(era: str) -> None:
    async with serving(quirky_gateway()) as url:
        async with Client(url, era=era) as plain:  # no roots capability: no roots, no error
            result = await plain.call_tool("q__roots_now", {})
            assert not result.is_error and orjson.loads(result.text) == {"roots": []}
        async with Client(url, era=era, roots=["file:///work/a"]) as rooted:
            result = await rooted.call_tool("q__roots_now", {})
            assert orjson.loads(result.text)["roots"][0]["uri"] == "file:///work/a"


class Asked:
    """An elicitation handler: records each consent form, accepts or declines."""

    def __init__(self, accept: bool) -> None:
        self.accept = accept
        self.forms: list[dict[str, Any]] = []

    async def __call__(self, request: Elicitation) -> dict[str, Any]:
        self.forms.append(request.requested_schema or {})
        if not self.accept:
            return {"action": "decline"}
        return {"action": "accept", "content": {"remember": True}}


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_an_anonymous_grant_is_never_another_clients(era: str) -> None:
    sys.path.insert(0, str(ROOT / "tests/servers"))
    from proxy_backend import build

    async with serving(build()) as url:
        entry = {"url": url, "consent": {"ask": ["echo"]}}
        gateway = Gateway(parse_config({"mcpServers": {"app": entry}}, env={}))
        async with serving(gateway) as front_url:
            first, second = Asked(accept=True), Asked(accept=False)
            async with Client(front_url, era=era, elicitation=first) as alice:  # type: ignore[arg-type]
                for _ in range(2):
                    assert (await alice.call_tool("app__echo", {"text": "a"})).text == "a"
            async with Client(front_url, era=era, elicitation=second) as bob:  # type: ignore[arg-type]
                refused = await bob.call_tool("app__echo", {"text": "b"})
                assert refused.is_error and "did not allow" in refused.text
            assert len(second.forms) == 1  # asked: alice's grant is not bob's
            if era == "legacy":  # remembered for alice's session
                assert len(first.forms) == 1
                assert "remember" in first.forms[0]["properties"]
            else:  # nobody to remember it for: asked each time, never offered
                assert len(first.forms) == 2
                assert all("remember" not in f.get("properties", {}) for f in first.forms)


def test_what_a_backend_sends_is_repaired_only_where_the_intent_is_plain() -> None:
    fine = {"name": "a", "inputSchema": {"type": "object"}}
    assert repaired_tool(fine) == (fine, None)  # the same object: nothing copied
    assert repaired_tool({"name": "a"})[0] == {"name": "a", "inputSchema": {"type": "object"}}
    nullable = {"name": "a", "inputSchema": {"type": ["object", "null"]}}
    assert repaired_tool(nullable)[0] == fine
    described = {**fine, "outputSchema": "text"}
    assert repaired_tool(described)[0] == fine
    for bad, why in (
        ({"inputSchema": {"type": "object"}}, "no name"),
        ({"name": "a", "inputSchema": "{}"}, "is a str"),
        ({"name": "a", "inputSchema": {"type": "array"}}, "type 'array'"),
        ({"name": "a", "inputSchema": {"properties": []}}, "properties is not an object"),
        ({"name": "a", "inputSchema": {"properties": {"x": 1}}}, "is not an object"),
        ({"name": "a", "inputSchema": {"required": "x"}}, "not a list of property names"),
    ):
        withheld, reason = repaired_tool(bad)
        assert withheld is None and reason is not None and why in reason, reason
    assert completed("tools/call", {}) == {"resultType": "complete", "content": []}
    assert completed("resources/read", {"contents": [1]}) == {
        "resultType": "complete",
        "contents": [1],
    }
    asking = {"resultType": "input_required", "inputRequests": {}}
    assert completed("prompts/get", dict(asking)) == asking
