"""The examples the README and the docs show are files, and they work."""

from __future__ import annotations

import importlib.util
from typing import Any

from mcpkit.server.transports.memory import MemoryTransport
from support import ROOT, meta, record


def load(path: str) -> Any:
    spec = importlib.util.spec_from_file_location(path.replace("/", "_"), ROOT / path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_weather_server() -> None:
    server = load("examples/weather_server.py").server
    t = MemoryTransport(server, trace=record)
    res = (
        await t.request(
            1,
            "tools/call",
            {"name": "forecast", "arguments": {"city": "Oslo", "days": 2}, "_meta": meta()},
        )
    ).result
    assert res["structuredContent"]["city"] == "Oslo" and len(res["structuredContent"]["days"]) == 2
    res = (
        await t.request(2, "resources/read", {"uri": "weather://cities/Lisbon", "_meta": meta()})
    ).result
    assert res["contents"][0]["text"].startswith("Lisbon:")
    templates = (await t.request(3, "resources/templates/list", {"_meta": meta()})).result
    assert templates["resourceTemplates"][0]["uriTemplate"] == "weather://cities/{name}"


async def test_client_quickstart(capsys: object) -> None:
    server = load("examples/weather_server.py").server
    await load("examples/client_quickstart.py").main(server)
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "connected to weather over the modern wire" in out
    assert "- forecast: Forecast for a city" in out and '"city":"Oslo"' in out


async def test_protected_server_and_oauth_client(tmp_path: Any) -> None:
    from mcpkit.auth import OAuth
    from support import AsgiClient, headers_for, rpc

    example = load("examples/protected_server.py")
    app = example.server.http_app(auth=example.auth)
    reply = await AsgiClient(app).post(rpc("tools/list"), headers_for(rpc("tools/list")))
    assert reply.status == 401 and "resource_metadata=" in reply.headers["www-authenticate"]
    schema = example.server.tools["my_orders"].definition["inputSchema"]
    assert "customer_id" not in schema.get("properties", {})
    client = load("examples/oauth_client.py").make_client(
        "http://127.0.0.1:8000/mcp", str(tmp_path / "t.json")
    )
    assert isinstance(client.transport.auth, OAuth)  # type: ignore[attr-defined]


async def test_tasks_server() -> None:
    from mcpkit.client import Client

    server = load("examples/tasks_server.py").server
    asked: list[str] = []

    def elicit(q: Any) -> dict[str, Any]:
        asked.append(q.message)
        return {"action": "accept", "content": {"drop_old": True}}

    async with Client(server, elicitation=elicit) as client:
        result = await client.call_tool("rebuild_index", {"shard": "eu-1"})
    assert result.text == "eu-1: rebuilt" and asked == ["Drop the old index of eu-1?"]
    assert len(server.tasks) == 1 and next(iter(server.tasks)).status == "completed"


async def test_host_context_example() -> None:
    example = load("examples/host_context.py")
    assert await example.main() == "Clear skies in Oslo."
    assert example.model.position == 3  # searched, called the tool it found, answered
    page = (ROOT / "docs/host-context.md").read_text(encoding="utf-8")
    for line in ('"alias": "weather"', "def per_user(call: CallInfo) -> CallExtras:"):
        assert line in page  # the host's context-budget page shows this file


async def test_idempotent_payments(capsys: object) -> None:
    example = load("examples/idempotent_payments.py")
    await example.main()
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert out == "charged 1250 cents (replayed: True); charges made: 1\n"
    # The client page shows the file whole, so that it runs as shown.
    page = (ROOT / "docs/client.md").read_text(encoding="utf-8")
    assert (ROOT / "examples/idempotent_payments.py").read_text(encoding="utf-8") in page
