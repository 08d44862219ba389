"""The gateway's chain options, as an MCP client of a real gateway sees them (a real stdio
backend process): `retry` (off by default) and `outputBudget`. The backend's deadline
(`timeouts`) is in tests/test_gateway_pipeline.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from gateway_support import serving
from mcpkit.client import Client
from mcpkit.gateway import Gateway, GatewaySettings
from mcpkit.host import HostSettings, parse_config
from mcpkit.host.audit import read_audit
from mcpkit.host.backoff import Backoff
from mcpkit.host.config import ConfigError
from mcpkit.protocol.errors import MCPError
from support import ROOT

SERVER = str(ROOT / "tests/servers/gateway_options_server.py")


def _config(gateway: dict[str, Any], marker: Path | None = None) -> Any:
    entry = {
        "command": sys.executable,
        "args": [SERVER, str(marker or "unused")],
        "consent": {"allow": ["*"]},
        "trusted": True,  # its idempotentHint counts (TOOL-12)
    }
    return parse_config({"gateway": gateway, "mcpServers": {"opt": entry}}, env={})


@pytest.mark.timing
@pytest.mark.parametrize("retry", [None, {"attempts": 3, "initial": 0.05}])
async def test_gateway_retry_repeats_a_harmless_call(
    tmp_path: Path, retry: dict[str, Any] | None
) -> None:
    """A trusted backend's idempotent tool whose process dies mid-call: with `retry` the
    gateway waits for the backend to be back and repeats it; without (the default: the calling
    client may retry itself) the caller hears that the outcome is unknown."""
    cfg = _config({} if retry is None else {"retry": retry}, tmp_path / "marker")
    audit = tmp_path / "audit.jsonl"
    gateway = Gateway(cfg, host=HostSettings(audit=audit, restart=Backoff(initial=0.05)))
    async with serving(gateway) as front, Client(front) as client:
        if retry is None:
            with pytest.raises(MCPError, match=r"backend 'opt' exited \(code 3\) during the call"):
                await client.call_tool("opt__flaky", {})
        else:
            result = await client.call_tool("opt__flaky", {})
            assert not result.is_error and result.text == "ran after a restart"
    [record] = read_audit(audit)
    if retry is None:
        assert (record["outcome"], record["error"]) == ("error", "BackendLost")
    else:
        assert (record["outcome"], record["attempts"]) == ("ok", 2)
        assert record["key"].startswith("mcpkit-")  # one key for both attempts


async def test_gateway_output_budget_cuts_results() -> None:
    cfg = _config({"outputBudget": 50})
    async with serving(Gateway(cfg)) as front, Client(front) as client:
        essay = await client.call_tool("opt__essay", {})
        short = await client.call_tool("opt__echo", {"text": "short"})
    texts = [b["text"] for b in essay.content]
    assert len(texts[0]) < 5000
    assert texts[1].startswith("[output truncated: characters 0-") and "of 5,000 shown]" in texts[1]
    assert "read_result" not in texts[1]  # the gateway keeps nothing to read on
    assert short.text == "short"  # within the budget: as the backend said it


async def test_gateway_without_budget_passes_results_whole() -> None:
    async with serving(Gateway(_config({}))) as front, Client(front) as client:
        essay = await client.call_tool("opt__essay", {})
    assert essay.text == "word " * 1000


@pytest.mark.parametrize(
    ("gateway", "message"),
    [
        ({"outputBudget": 0}, '"outputBudget" is a whole number of tokens above 0'),
        ({"retry": {"attempts": 0}}, '"retry": "attempts" must be a whole number'),
        ({"retry": {"tries": 2}}, "unknown keys ['tries']"),
    ],
)
def test_gateway_options_are_checked(gateway: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        GatewaySettings.from_config(_config(gateway))


def test_gateway_options_default_off() -> None:
    settings = GatewaySettings.from_config(_config({}))
    assert settings.retry is None and settings.output_budget is None
    assert GatewaySettings.from_config(_config({"retry": True})).retry is not None
