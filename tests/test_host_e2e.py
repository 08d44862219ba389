"""The host end to end with the real `anthropic` and `openai` SDKs, against local fake model APIs
that return scripted tool calls, over the three Northwind servers (one stdio, two HTTP)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from fake_models import FakeAPI, anthropic_reply, openai_reply
from mcpkit.client.inputs import Elicitation
from mcpkit.host import ConsentPolicy, Decision, Host, PendingCall, load_config
from mcpkit.host.conversation import ToolResult
from support import ROOT, free_port, wait_port

NORTHWIND = ROOT / "examples/northwind"


class RecordingUI:
    """Non-interactive user: allows everything except cancellations; confirms returns."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def user(self, text: str) -> None:
        self.events.append(("user", text))

    def assistant(self, text: str) -> None:
        self.events.append(("assistant", text))

    def tool_call(self, call: PendingCall, decision: Decision) -> None:
        self.events.append(("call", (call.alias, decision)))

    async def confirm(self, call: PendingCall) -> bool:
        self.events.append(("confirm", call.alias))
        return not call.tool.startswith("cancel")

    def tool_result(self, call: PendingCall, result: ToolResult) -> None:
        self.events.append(("result", (call.alias, result.is_error)))

    def progress(
        self, call: PendingCall, progress: float, total: float | None, message: str | None
    ) -> None:
        self.events.append(("progress", call.alias))

    async def elicit(self, server: str, request: Elicitation) -> dict[str, Any]:
        self.events.append(("elicit", server))
        return {"action": "accept", "content": {"confirm": True}}

    def warn(self, text: str) -> None:
        self.events.append(("warn", text))

    def info(self, text: str) -> None:
        self.events.append(("info", text))


@pytest.fixture
async def northwind() -> AsyncIterator[dict[str, str]]:
    ports = {"WAREHOUSE_PORT": free_port(), "RETURNS_PORT": free_port()}
    procs = []
    for script, key in (
        ("warehouse_server.py", "WAREHOUSE_PORT"),
        ("returns_server.py", "RETURNS_PORT"),
    ):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(NORTHWIND / script), str(ports[key])
        )
        procs.append(proc)
        await wait_port(ports[key], proc)
    yield {"PYTHON": sys.executable, **{k: str(v) for k, v in ports.items()}}
    for proc in procs:
        proc.terminate()
    await asyncio.gather(*(p.wait() for p in procs))


# -- the script, in provider-neutral form: each step is a list of (tool, args) or a final text --
STEPS: list[list[tuple[str, dict[str, Any]]] | str] = [
    [
        ("shipping__track_parcel", {"parcel_id": "NW-1042"}),
        ("shipping__track_parcel", {"parcel_id": "NW-0000"}),
    ],
    "Parcel found; NW-0000 does not exist.",
    [
        ("returns__create_return", {"order_id": "ORD-7", "reason": "cracked"}),
        ("warehouse__reserve_stock", {"sku": "KET-BLUE", "quantity": 1, "order_id": "ORD-7"}),
    ],
    "Return created and replacement reserved.",
    [
        ("warehouse__cancel_reservation", {"reservation_id": "R-501"}),
        ("returns__list_orders", {"customer_id": "C-2002"}),
        ("warehouse__reservation_status", {"reservation_id": "R-501"}),
    ],
    "Done.",
]
TURNS = [
    "Where is NW-1042 (and NW-0000)?",
    "Return ORD-7 and reserve a new kettle.",
    "Cancel R-501; list C-2002's orders.",
]


def tool_names(provider: str, body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    if provider == "anthropic":
        return {t["name"]: t["input_schema"] for t in body["tools"]}
    return {t["function"]["name"]: t["function"]["parameters"] for t in body["tools"]}


def tool_results(provider: str, body: dict[str, Any]) -> list[tuple[str, bool]]:
    """(text, is_error) of the tool results in the last message(s) of a request."""
    if provider == "anthropic":
        last = body["messages"][-1]["content"]
        return [(" ".join(c.get("text", "") for c in r["content"]), r["is_error"]) for r in last]
    out = []
    for m in reversed(body["messages"]):
        if m["role"] != "tool":
            break
        out.append((m["content"], m["content"].startswith("ERROR: ")))
    return list(reversed(out))


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_host_with_real_sdk(provider: str, northwind: dict[str, str]) -> None:
    make = anthropic_reply if provider == "anthropic" else openai_reply
    replies = [lambda body, s=step, n=n: make(s, n) for n, step in enumerate(STEPS)]
    path = "/v1/messages" if provider == "anthropic" else "/v1/chat/completions"
    async with FakeAPI(path, replies) as api:
        if provider == "anthropic":
            import anthropic

            from mcpkit.host.models.anthropic import AnthropicModel

            model: Any = AnthropicModel(
                "fake", client=anthropic.AsyncAnthropic(api_key="test", base_url=api.url)
            )
        else:
            import openai

            from mcpkit.host.models.openai import OpenAIModel

            model = OpenAIModel(
                "fake", client=openai.AsyncOpenAI(api_key="test", base_url=api.url + "/v1")
            )
        config = load_config(NORTHWIND / "northwind.json", env=northwind)
        ui = RecordingUI()
        async with Host(config, model=model, ui=ui, policy=ConsentPolicy()) as host:
            agent = host.agent(system="Northwind support.")
            for turn in TURNS:
                await agent.ask(turn)
                if turn is TURNS[1]:
                    # The reservation made the warehouse add a tool; its list_changed travels on
                    # the listen stream, asynchronously: the next turn starts once it has arrived.
                    await asyncio.wait_for(host.fleet.links["warehouse"].changed.wait(), 10)
        # Closed here, on its loop: a client left to the GC schedules its aclose() on whichever
        # loop runs then (a later test's), fails there, and logs a traceback mid-measurement.
        await model.client.close()

    bodies = api.requests
    assert len(bodies) == len(STEPS)
    # Namespaced names and adapted schemas went to the API; host-owned fields are hidden.
    first = tool_names(provider, bodies[0])
    assert {
        "shipping__track_parcel",
        "warehouse__get_stock",
        "returns__create_return",
        "returns__list_orders",
    } <= set(first)
    assert all(schema["type"] == "object" for schema in first.values())
    assert "customer_id" not in first["returns__list_orders"]["properties"]
    assert "warehouse__reservation_status" not in first
    # Reverse mapping reached the right server; an unknown parcel is an is_error result.
    (found, found_err), (missing, missing_err) = tool_results(provider, bodies[1])
    assert "in transit" in found and not found_err
    assert "No parcel" in missing and missing_err
    # One elicitation round (returns asked the user), and the reservation was made.
    assert ("elicit", "returns") in ui.events
    (ret, ret_err), (res, _) = tool_results(provider, bodies[3])
    assert '"created"' in ret and not ret_err and "R-501" in res
    # list_changed between turns: the new warehouse tool is offered afterwards.
    assert "warehouse__reservation_status" in tool_names(provider, bodies[4])
    # The denied destructive call never reached the server: the reservation is still held.
    (cancel, cancel_err), (owned, owned_err), (status, status_err) = tool_results(
        provider, bodies[5]
    )
    assert cancel_err and "did not allow" in cancel
    assert ("confirm", "warehouse__cancel_reservation") in ui.events
    assert '"held"' in status and not status_err
    # The host-owned field the model tried to set was refused before any server saw it.
    assert owned_err and "customer_id can only be set by the host" in owned
    assert any(kind == "warn" and "host-owned" in text for kind, text in ui.events)
