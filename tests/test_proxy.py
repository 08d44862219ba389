"""`proxy(target)`: one MCP server forwarded, in either era on each side, over HTTP and stdio:
calls, MRTR input both ways (two rounds), progress, reads, templates, prompts, completions,
tasks, cancellation, list changes and resource updates, caching hints."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway_support import Answers, accept, serving
from mcpkit import Server
from mcpkit.client import Client
from mcpkit.gateway import proxy
from mcpkit.server.caching import CacheHint
from support import ROOT, scaled

sys.path.insert(0, str(ROOT / "tests/servers"))
from proxy_backend import build

BACKEND = ROOT / "tests/servers/proxy_backend.py"


@pytest.fixture
async def backend() -> AsyncIterator[tuple[Server, str]]:
    server = build()
    async with serving(server) as url:
        yield server, url


async def exercise(front: str, era: str, server: Any, backend_era: str) -> None:
    answers = Answers(accept(name="Ann"), accept(city="Oslo"))
    async with Client(front, era=era, elicitation=answers) as client:  # type: ignore[arg-type]
        assert client.era == era
        names = {t.name for t in await client.list_tools()}
        assert {"echo", "greet", "count", "hold", "job", "grow", "touch"} <= names
        assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
        link = server.links["backend"]
        assert link.client is not None and link.client.era == backend_era
        # MRTR-05/16: two rounds of input through the proxy, whatever each side speaks.
        assert (await client.call_tool("greet", {})).text == "Hello Ann from Oslo!"
        assert answers.asked == ["What is your name?", "And your city?"]
        seen: list[float] = []
        done = await client.call_tool("count", {"n": 3}, progress=lambda p, t, m: seen.append(p))
        assert done.text == "counted to 3" and seen == [1, 2, 3]
        assert (await client.read_resource("notes://a")).text == "note a"
        assert (await client.read_resource("notes://items/7")).text == "item 7"
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates] == ["notes://items/{item}"]
        prompt = await client.get_prompt("review", {"code": "x = 1"})
        assert prompt.messages[0]["content"]["text"] == "Please review: x = 1"
        done_values = await client.complete({"type": "ref/prompt", "name": "review"}, "code", "py")
        assert done_values.values == ["python", "pytest"]


@pytest.mark.parametrize("front_era", ["modern", "legacy"])
@pytest.mark.parametrize("backend_era", ["modern", "legacy"])
async def test_proxy_over_http(
    backend: tuple[Server, str], backend_era: str, front_era: str
) -> None:
    _, url = backend
    server = proxy(url, era=backend_era)
    async with serving(server) as front:
        await exercise(front, front_era, server, backend_era)


@pytest.mark.parametrize("front_era", ["modern", "legacy"])
@pytest.mark.parametrize("backend_era", ["modern", "legacy"])
async def test_proxy_of_a_stdio_server(backend_era: str, front_era: str) -> None:
    server = proxy([sys.executable, str(BACKEND)], era=backend_era)
    async with serving(server) as front:
        await exercise(front, front_era, server, backend_era)


async def test_a_task_through_the_proxy(backend: tuple[Server, str]) -> None:
    """The backend runs `job` as a task; the front gets a task of the proxy's own, answers the
    backend's question through tasks/get and tasks/update (TASK-10/11), and the result."""
    _, url = backend
    async with (
        serving(proxy(url)) as front,
        Client(front, elicitation=Answers(accept(go=True))) as client,
    ):
        created = await client.request("tools/call", {"name": "job"}, raw=True)
        assert created["resultType"] == "task"
        task_id = created["taskId"]
        asked = await _until(client, task_id, "input_required")
        [(key, question)] = asked["inputRequests"].items()
        assert question["params"]["message"] == "Go on?"
        await client.request(
            "tasks/update",
            {
                "taskId": task_id,
                "inputResponses": {key: {"action": "accept", "content": {"go": True}}},
            },
            raw=True,
        )
        final = await _until(client, task_id, "completed")
        assert final["result"]["content"][0]["text"] == "job done (task True, go True)"
        # And the client's own task following does the same in one call.
        result = await client.call_tool("job", {})
        assert result.text == "job done (task True, go True)"


async def _until(client: Client, task_id: str, status: str) -> dict[str, Any]:
    async with asyncio.timeout(scaled(10)):
        while True:
            task = await client.request("tasks/get", {"taskId": task_id}, use_cache=False)
            if task["status"] == status:
                return task
            assert task["status"] == "working", task
            await asyncio.sleep(0.02)  # polling a task is its protocol (pollIntervalMs)


async def test_cancelling_a_proxied_call_cancels_it_on_the_backend(
    backend: tuple[Server, str],
) -> None:
    server, url = backend
    async with serving(proxy(url)) as front, Client(front) as client:
        call = asyncio.create_task(client.call_tool("hold", {}))
        await asyncio.wait_for(server.started.wait(), scaled(10))  # type: ignore[attr-defined]
        call.cancel()  # CANC-04: the client closes its stream; the proxy closes the backend's
        await asyncio.wait_for(server.cancelled.wait(), scaled(10))  # type: ignore[attr-defined]


async def test_backend_changes_reach_the_proxy_listeners(backend: tuple[Server, str]) -> None:
    _, url = backend
    async with (
        serving(proxy(url)) as front,
        Client(front) as client,
        client.subscribe(tools=True, resource_uris=["notes://a"]) as sub,
    ):
        await client.call_tool("grow", {})
        note = await asyncio.wait_for(anext(aiter(sub)), scaled(10))
        assert note.method == "notifications/tools/list_changed"
        assert "extra" in {t.name for t in await client.list_tools()}
        assert (await client.call_tool("extra", {})).text == "extra"
        await client.call_tool("touch", {})
        note = await asyncio.wait_for(anext(aiter(sub)), scaled(10))
        assert note.method == "notifications/resources/updated"
        assert note.params is not None and note.params["uri"] == "notes://a"


async def test_caching_hints_are_never_widened() -> None:
    """CACHE-10/11: a backend's private list stays private through the proxy, and its read
    hints pass unchanged."""
    server = build()
    server.cache["tools/list"] = CacheHint(5_000, "private")
    server.cache["resources/read"] = CacheHint(30_000, "public")
    async with serving(server) as url, serving(proxy(url)) as front, Client(front) as client:
        listed = await client.request("tools/list", use_cache=False)
        assert (listed["ttlMs"], listed["cacheScope"]) == (5_000, "private")
        read = await client.request("resources/read", {"uri": "notes://a"}, use_cache=False)
        assert (read["ttlMs"], read["cacheScope"]) == (30_000, "public")
        prompts = await client.request("prompts/list", use_cache=False)
        assert prompts["cacheScope"] == "public" and prompts["ttlMs"] <= 60_000


@pytest.mark.parametrize("front_era", ["modern", "legacy"])
@pytest.mark.parametrize("backend_era", ["modern", "legacy"])
async def test_logs_sampling_and_roots_through_the_proxy(
    backend: tuple[Server, str], backend_era: str, front_era: str
) -> None:
    _, url = backend
    logs: list[Any] = []

    def sample(params: dict[str, Any]) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "Paris"},
            "model": "test-model",
        }

    async with (
        serving(proxy(url, era=backend_era)) as front,
        Client(
            front,
            era=front_era,  # type: ignore[arg-type]
            sampling=sample,
            roots=["file:///work/project"],
            log_level="info",
            on_log=lambda level, data, logger: logs.append(data),
        ) as client,
    ):
        result = await client.call_tool("chatty", {})
        assert result.text == "Paris / file:///work/project"
        assert "chatty says hi" in logs
