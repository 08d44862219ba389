"""The README's examples are files, and they work."""

from __future__ import annotations

import importlib.util
from typing import Any

from mcpkit.transports.memory import MemoryTransport
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
