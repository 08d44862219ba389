"""The demo's stand-in for a language model: `ScriptedModel` replays these steps (no AI).

Each step looks at the conversation so far and returns the next assistant message, so the
tool calls are fixed but the answers quote what the real servers returned.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mcpkit.host import (
    AssistantMessage,
    Message,
    ScriptedModel,
    ToolCall,
    ToolResults,
    ToolSpec,
)

SUPPORT_TURNS = [
    "Hi, this is Dana. Where is my parcel NW-1042, and is the blue kettle (KET-BLUE) in stock?",
    "The kettle from order ORD-7 arrived cracked. Please open a return and reserve a replacement.",
    "Thanks. Also cancel that reservation, track NW-0000, and list the orders of customer C-2002.",
]


def _last_results(history: list[Message]) -> list[dict[str, Any]]:
    """The last tool results, as (text, is_error) pairs parsed where they are JSON."""
    for m in reversed(history):
        if isinstance(m, ToolResults):
            out = []
            for r in m.results:
                text = " ".join(b.get("text", "") for b in r.content if b.get("type") == "text")
                try:
                    value: Any = json.loads(text)
                except json.JSONDecodeError:
                    value = text
                out.append({"value": value, "error": r.is_error})
            return out
    return []


def _calls(*calls: tuple[str, dict[str, Any]]) -> AssistantMessage:
    return AssistantMessage(
        "", [ToolCall(f"call_{i}_{name}", name, args) for i, (name, args) in enumerate(calls)]
    )


def step_track_and_stock(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
    return _calls(
        ("shipping__track_parcel", {"parcel_id": "NW-1042"}),
        ("warehouse__get_stock", {"sku": "KET-BLUE"}),
    )


def step_answer_status(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
    parcel, stock = (r["value"] for r in _last_results(history))
    return AssistantMessage(
        f"Your parcel {parcel['parcel_id']} is {parcel['status']} with {parcel['carrier']} (last scan: "
        f"{parcel['last_scan']}), due {parcel['eta']}. We have {stock['in_stock']} blue kettles in stock."
    )


def step_return_and_reserve(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
    return _calls(
        ("returns__create_return", {"order_id": "ORD-7", "reason": "arrived cracked"}),
        ("warehouse__reserve_stock", {"sku": "KET-BLUE", "quantity": 1, "order_id": "ORD-7"}),
    )


def step_answer_return(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
    ret, res = (
        r["value"] if isinstance(r["value"], dict) else {"status": r["value"]}
        for r in _last_results(history)
    )
    names = sorted(t.name for t in tools)
    extra = (
        " (I can now also check reservation status.)"
        if "warehouse__reservation_status" in names
        else ""
    )
    return AssistantMessage(
        f"Return {ret.get('rma', '?')} is {ret['status']} for {ret.get('order_id', 'ORD-7')}; a replacement "
        f"is reserved as {res.get('reservation_id', '?')}.{extra}"
    )


def _reservation_id(history: list[Message]) -> str:
    """The reservation handle the warehouse returned earlier in the conversation."""
    for m in reversed(history):
        if isinstance(m, ToolResults):
            for r in m.results:
                for b in r.content:
                    text = b.get("text", "") if b.get("type") == "text" else ""
                    if '"reservation_id"' in text:
                        return str(json.loads(text)["reservation_id"])
    return "unknown"


def step_cancel_track_list(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
    return _calls(
        ("warehouse__cancel_reservation", {"reservation_id": _reservation_id(history)}),
        ("shipping__track_parcel", {"parcel_id": "NW-0000"}),
        ("returns__list_orders", {"customer_id": "C-2002"}),
    )


def step_answer_refusals(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
    cancel, track, orders = _last_results(history)
    return AssistantMessage(
        "I could not do all of that: the cancellation was not approved "
        f"({cancel['value']}), NW-0000 is unknown ({track['value']}), and I may not look up another "
        f"customer's orders ({orders['value']})."
    )


def support_model() -> ScriptedModel:
    return ScriptedModel(
        [
            step_track_and_stock,
            step_answer_status,
            step_return_and_reserve,
            step_answer_return,
            step_cancel_track_list,
            step_answer_refusals,
        ]
    )


LOGISTICS_TURNS = ["How many blue kettles and mug sets are left?"]
RETURNS_TURNS = ["List my orders, please."]


def logistics_model() -> ScriptedModel:
    def ask(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return _calls(
            ("warehouse__get_stock", {"sku": "KET-BLUE"}),
            ("warehouse__get_stock", {"sku": "MUG-SET"}),
        )

    def answer(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        kettles, mugs = (r["value"] for r in _last_results(history))
        return AssistantMessage(
            f"{kettles['in_stock']} blue kettles and {mugs['in_stock']} mug sets are left."
        )

    return ScriptedModel([ask, answer])


def returns_model() -> ScriptedModel:
    def ask(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return _calls(("returns__list_orders", {}))  # the host fills customer_id from configuration

    def answer(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        (orders,) = _last_results(history)
        ids = ", ".join(o["order_id"] for o in orders["value"])
        return AssistantMessage(f"Your orders: {ids}.")

    return ScriptedModel([ask, answer])


PLANNER_TURNS = ["Which SKU moved most in the last 5 days? Read the whole stock movement log."]


def planner_model() -> ScriptedModel:
    """Deferred loading and a paged result: the planner's catalogue is over its budget, so it
    searches for the tool first; the log is over its output budget, so it pages through it."""

    def search(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return _calls(("search_tools", {"query": "stock movement log"}))

    def call(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        # The search described the tool; the tool list stays as it was (the prompt cache), so
        # the found tool is called through the host's call_found_tool.
        assert "warehouse__stock_movements" in str(_last_results(history))
        assert "call_found_tool" in {t.name for t in tools}
        found = {"name": "warehouse__stock_movements", "arguments": {"days": 5}}
        return _calls(("call_found_tool", found))

    def page(history: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        text = " ".join(str(r["value"]) for r in _last_results(history))
        found = re.search(r'handle "(r\d+)" and offset (\d+)', text) or re.search(
            r'next: read_result handle "(r\d+)" offset (\d+)', text
        )
        if found is None:  # the end of the log
            return AssistantMessage(_busiest(history))
        handle, offset = found.group(1), int(found.group(2))
        return _calls(("read_result", {"handle": handle, "offset": offset}))

    return ScriptedModel([search, call, *[page] * 10])


def _busiest(history: list[Message]) -> str:
    moved: dict[str, int] = {}
    for m in history:
        if isinstance(m, ToolResults):
            for r in m.results:
                for b in r.content:
                    for sku, qty in re.findall(r"day \d+ (\S+) [+-](\d+)", b.get("text", "")):
                        moved[sku] = moved.get(sku, 0) + int(qty)
    sku, units = max(moved.items(), key=lambda kv: kv[1])
    return f"{sku} moved most: {units} units in and out over 5 days (read in pages)."
