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
from pathlib import Path
from typing import Any

from host_support import (
    FAULTS,
    NORTHWIND,
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

CREATE_RETURN = b"mcp-name: create_return"
RETURN_ORD_7 = ("returns__create_return", {"order_id": "ORD-7", "reason": "arrived cracked"})


class LosingUI(RecordingUI):
    """Confirms the return when the server asks (its first round came back `input_required`),
    and arms the proxy: the answers to the next `cuts` create_return requests, the round that
    creates the return and any re-send of it, are lost after the server ran it."""

    def __init__(self, proxy: TcpProxy, cuts: int) -> None:
        super().__init__()
        self.proxy, self.cuts = proxy, cuts

    async def elicit(self, server: str, request: Elicitation) -> dict[str, Any]:
        self.proxy.cut_next(CREATE_RETURN, times=self.cuts)
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


async def converse(
    url: str, provider: str, cuts: int, tmp_path: Path
) -> tuple[FakeAPI, LosingUI, Sent, LinkState, dict[str, Any]]:
    """One conversation that asks for a return while the proxy loses its answer `cuts` times:
    the API, the user, what was sent, the link's state after and the audit record of the call."""
    port = int(url.rsplit(":", 1)[1])
    replies = script(provider, [RETURN_ORD_7], "Done.")
    sent = Sent()
    async with (
        TcpProxy(upstream=("127.0.0.1", port)) as proxy,
        FakeAPI(api_path(provider), replies) as api,
    ):
        ui = LosingUI(proxy, cuts)
        cfg = example_config({"PYTHON": sys.executable, "RETURNS_PORT": str(proxy.port)})
        settings = settings_for(cfg, tmp_path)
        features = ClientFeatures(trace=sent)
        async with host_for(
            cfg, api, ui, tmp_path, settings=settings, servers=["returns"], features=features
        ) as host:
            await host.agent().ask("The kettle of ORD-7 arrived cracked; please return it.")
            state = host.fleet.links["returns"].state
        assert proxy.cuts == cuts
    (record,) = [r for r in read_audit(settings.audit or "") if r["tool"] == "create_return"]
    return api, ui, sent, state, record


async def test_a_lost_answer_is_retried_with_the_same_key_and_the_model_sees_the_first(
    tmp_path: Path,
) -> None:
    # Lost twice: the client sends a keyed call once more itself (the server honours keys),
    # so the host's own retry is what gets the answer.
    async with serving(str(NORTHWIND / "returns_server.py")) as url:
        api, ui, sent, state, record = await converse(url, "anthropic", 2, tmp_path)
        returns = await returns_of(url)

    ((text, is_error),) = tool_results("anthropic", api.requests[1])
    assert not is_error and '"rma":"RMA-3001"' in text.replace(" ", "")  # the first answer
    assert [r["rma"] for r in returns] == ["RMA-3001"]  # one return exists
    # Sent 4 times with one key: the input_required round, the round that created the return,
    # the client's re-send of it, the host's retry (answered from the server's record).
    keys = sent.keys("create_return")
    assert len(keys) == 4 and len(set(keys)) == 1 and keys[0].startswith("mcpkit-")
    assert ui.of("elicit") == ["returns"]  # the retry was answered, not run: no second question
    assert ("returns", "down") in ui.of("state") and state is LinkState.READY  # back for it
    assert (record["outcome"], record["attempts"], record["key"]) == ("ok", 2, keys[0])


async def test_without_the_extension_a_lost_answer_is_an_unknown_outcome_never_repeated(
    tmp_path: Path,
) -> None:
    async with serving(FAULTS, "returns-plain") as url:
        api, ui, sent, _, record = await converse(url, "openai", 1, tmp_path)
        returns = await returns_of(url)

    ((text, is_error),) = tool_results("openai", api.requests[1])
    keys = sent.keys("create_return")
    assert is_error and "The outcome of the call to returns > create_return is unknown" in text
    assert "may or may not have taken effect, so the host did not repeat it" in text
    assert f"Its idempotency key is {keys[0]}" in text
    # Sent twice (the input_required round, and the round that ran): never again.
    assert len(keys) == 2 and len(set(keys)) == 1
    assert [r["rma"] for r in returns] == ["RMA-3001"]  # it ran exactly once
    assert ui.of("elicit") == ["returns"]
    assert (record["outcome"], record["attempts"], record["key"]) == ("unknown", 1, keys[0])
    assert keys[0] in record["error"]
