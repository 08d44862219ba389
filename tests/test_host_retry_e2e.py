"""Safe retries end to end: the Northwind returns server (a real process) behind a TCP proxy that
loses `create_return`'s answer after the server ran it, the host on the real model SDKs.

With the idempotency extension the host repeats the call with the same key and the model gets
the first answer; without it the model is told the outcome is unknown, and nothing is repeated.
The server's own data (`list_returns`) shows how many returns exist."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from host_support import (
    FAULTS,
    NORTHWIND,
    WAREHOUSE,
    FakeAPI,
    RecordingUI,
    api_path,
    example_config,
    host_for,
    script,
    settings_for,
    start_http,
    stop,
    tool_results,
)
from mcpkit.client import Client
from mcpkit.client.inputs import Elicitation
from mcpkit.host import LinkState
from mcpkit.host.audit import read_audit
from mcpkit.host.link import ClientFeatures
from mcpkit.protocol.idempotency import IDEMPOTENCY_KEY
from support import free_port
from tcp_proxy import TcpProxy

RETURN_ORD_7 = ("returns__create_return", {"order_id": "ORD-7", "reason": "arrived cracked"})
STOCK = ("warehouse__get_stock", {"sku": "KET-BLUE"})


class LosingUI(RecordingUI):
    """Allows every call and confirms what servers ask. With `at_question`, arms the proxy when
    the server asks (create_return's first round came back `input_required`): the answers to
    the next `cuts` requests for the tool, the round that creates the return and any re-send
    of it, are lost after the server ran it."""

    def __init__(self, proxy: TcpProxy, tool: str, cuts: int, at_question: bool) -> None:
        super().__init__()
        self.proxy, self.cuts, self.at_question = proxy, cuts, at_question
        self.marker = b"mcp-name: " + tool.encode()

    def arm(self) -> None:
        self.proxy.cut_next(self.marker, times=self.cuts)

    async def elicit(self, server: str, request: Elicitation) -> dict[str, Any]:
        if self.at_question:
            self.arm()
        return await super().elicit(server, request)


class Sent:
    """The JSON-RPC messages the host sent, seen through the client's trace."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def __call__(self, server: str, direction: str, message: dict[str, Any]) -> None:
        if direction == "send":
            self.messages.append(message)

    def keys(self, tool: str) -> list[str]:
        """The idempotency key of every `tools/call` of `tool`, in order."""
        return [
            m["params"]["_meta"].get(IDEMPOTENCY_KEY)
            for m in self.messages
            if m.get("method") == "tools/call" and m["params"]["name"] == tool
        ]


@contextlib.asynccontextmanager
async def serving(*argv: str) -> AsyncIterator[str]:
    """`python *argv PORT` serving HTTP; its URL."""
    port = free_port()
    proc = await start_http(argv, port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await stop(proc)


async def returns_of(url: str) -> list[dict[str, str]]:
    """What the server itself holds: the customer's returns."""
    auth = {"Authorization": "Bearer tok-c1001"}
    async with Client(url + "/mcp", headers=auth) as client:
        data: list[dict[str, str]] = json.loads((await client.call_tool("list_returns")).text)
        return data


@dataclass
class Run:
    """What one conversation left: the model API, the user, what the host sent, the link's
    state at the end and the audit record of the tool call."""

    api: FakeAPI
    ui: LosingUI
    sent: Sent
    state: LinkState
    record: dict[str, Any]


async def converse(
    tmp_path: Path,
    url: str,
    provider: str,
    call: tuple[str, dict[str, Any]],
    cuts: int,
    *,
    at_question: bool = False,
    **entry: Any,
) -> Run:
    """The model makes `call` once (to the server at `url`, behind a proxy that loses its answer
    `cuts` times), then answers. `entry`: changes to the server's config entry."""
    server, tool = call[0].split("__")
    port = int(url.rsplit(":", 1)[1])
    replies = script(provider, [call], "Done.")
    sent = Sent()
    async with (
        TcpProxy(upstream=("127.0.0.1", port)) as proxy,
        FakeAPI(api_path(provider), replies) as api,
    ):
        ui = LosingUI(proxy, tool, cuts, at_question)
        env = {"PYTHON": sys.executable, f"{server.upper()}_PORT": str(proxy.port)}
        cfg = example_config(env, **{server: entry})
        settings = settings_for(cfg, tmp_path)
        features = ClientFeatures(trace=sent)
        async with host_for(
            cfg, api, ui, tmp_path, settings=settings, servers=[server], features=features
        ) as host:
            if not at_question:
                ui.arm()
            await host.agent().ask("Please help.")
            state = host.fleet.links[server].state
        assert proxy.cuts == cuts
    (record,) = read_audit(settings.audit or "")
    return Run(api, ui, sent, state, record)


async def test_a_lost_answer_is_retried_with_the_same_key_and_the_model_sees_the_first(
    tmp_path: Path,
) -> None:
    # Lost twice: the client sends a keyed call once more itself (the server honours keys),
    # so the host's own retry is what gets the answer.
    async with serving(str(NORTHWIND / "returns_server.py")) as url:
        run = await converse(tmp_path, url, "anthropic", RETURN_ORD_7, 2, at_question=True)
        returns = await returns_of(url)

    ((text, is_error),) = tool_results("anthropic", run.api.requests[1])
    assert not is_error and '"rma":"RMA-3001"' in text.replace(" ", "")  # the first answer
    assert [r["rma"] for r in returns] == ["RMA-3001"]  # one return exists
    # Sent 4 times with one key: the input_required round, the round that created the return,
    # the client's re-send of it, the host's retry (answered from the server's record).
    keys = run.sent.keys("create_return")
    assert len(keys) == 4 and len(set(keys)) == 1 and keys[0].startswith("mcpkit-")
    assert run.ui.of("elicit") == ["returns"]  # the retry was answered, not run: asked once
    assert ("returns", "down") in run.ui.of("state") and run.state is LinkState.READY
    assert (run.record["outcome"], run.record["attempts"]) == ("ok", 2)
    assert run.record["key"] == keys[0]


async def test_without_the_extension_a_lost_answer_is_an_unknown_outcome_never_repeated(
    tmp_path: Path,
) -> None:
    async with serving(FAULTS, "returns-plain") as url:
        run = await converse(tmp_path, url, "openai", RETURN_ORD_7, 1, at_question=True)
        returns = await returns_of(url)

    ((text, is_error),) = tool_results("openai", run.api.requests[1])
    keys = run.sent.keys("create_return")
    assert is_error and "The outcome of the call to returns > create_return is unknown" in text
    assert "may or may not have taken effect, so the host did not repeat it" in text
    assert f"Its idempotency key is {keys[0]}" in text
    # Sent twice (the input_required round, and the round that ran): never again.
    assert len(keys) == 2 and len(set(keys)) == 1
    assert [r["rma"] for r in returns] == ["RMA-3001"]  # it ran exactly once
    assert run.ui.of("elicit") == ["returns"]
    assert (run.record["outcome"], run.record["attempts"]) == ("unknown", 1)
    assert run.record["key"] == keys[0] and keys[0] in run.record["error"]


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted", "untrusted"])
async def test_a_read_only_tool_is_retried_only_when_its_server_is_trusted(
    tmp_path: Path, trusted: bool
) -> None:
    """The warehouse does not know idempotency keys; `get_stock` is annotated read-only, which
    counts only when the config trusts the server (TOOL-12)."""
    async with serving(*WAREHOUSE) as url:
        run = await converse(tmp_path, url, "anthropic", STOCK, 1, trusted=trusted)

    ((text, is_error),) = tool_results("anthropic", run.api.requests[1])
    keys = run.sent.keys("get_stock")
    if trusted:
        assert not is_error and '"in_stock"' in text
        assert len(keys) == 2 and len(set(keys)) == 1
        assert (run.record["outcome"], run.record["attempts"]) == ("ok", 2)
    else:
        assert is_error and "The outcome of the call to warehouse > get_stock is unknown" in text
        assert len(keys) == 1
        assert (run.record["outcome"], run.record["attempts"]) == ("unknown", 1)
