"""The host end to end with the real `anthropic` and `openai` SDKs, against local fake model APIs
that return scripted tool calls, over the three Northwind servers (one stdio, two HTTP)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from host_support import (
    NORTHWIND,
    FakeAPI,
    RecordingUI,
    anthropic_reply,
    api_path,
    make_model,
    northwind_http,
    openai_reply,
    tool_names,
    tool_results,
)
from mcpkit.host import ConsentPolicy, Host, load_config
from support import scaled


@pytest.fixture
async def northwind() -> AsyncIterator[dict[str, str]]:
    async with northwind_http() as env:
        yield env


#: Stands for the reservation handle the warehouse returned (read from the conversation).
RESERVATION = "<reservation>"
HANDLE_RE = re.compile(r"reservation_[A-Za-z0-9_-]{24}")


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
        ("warehouse__cancel_reservation", {"reservation_id": RESERVATION}),
        ("returns__list_orders", {"customer_id": "C-2002"}),
        ("warehouse__reservation_status", {"reservation_id": RESERVATION}),
    ],
    "Done.",
]
TURNS = [
    "Where is NW-1042 (and NW-0000)?",
    "Return ORD-7 and reserve a new kettle.",
    "Cancel that reservation; list C-2002's orders.",
]


def with_handle(step: Any, body: dict[str, Any]) -> Any:
    """The step with the reservation handle the server returned earlier in `body`."""
    if isinstance(step, str):
        return step
    found = HANDLE_RE.findall(json.dumps(body))
    handle = found[-1] if found else RESERVATION
    return [
        (name, {k: handle if v == RESERVATION else v for k, v in args.items()})
        for name, args in step
    ]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_host_with_real_sdk(provider: str, northwind: dict[str, str]) -> None:
    make = anthropic_reply if provider == "anthropic" else openai_reply
    replies = [
        lambda body, s=step, n=n: make(with_handle(s, body), n) for n, step in enumerate(STEPS)
    ]
    async with FakeAPI(api_path(provider), replies) as api:
        model = make_model(provider, api)
        config = load_config(NORTHWIND / "northwind.json", env=northwind)
        ui = RecordingUI()
        async with Host(config, model=model, ui=ui, policy=ConsentPolicy()) as host:
            agent = host.agent(system="Northwind support.")
            for turn in TURNS:
                await agent.ask(turn)
                if turn is TURNS[1]:
                    # The reservation made the warehouse add a tool; its list_changed travels on
                    # the listen stream, asynchronously: the next turn starts once it has arrived.
                    await asyncio.wait_for(host.fleet.links["warehouse"].changed.wait(), scaled(10))

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
    assert '"created"' in ret and not ret_err and HANDLE_RE.search(res)  # a state handle
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
