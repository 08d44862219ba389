"""The CLI reference in Markdown, generated from the commands themselves (the docs build calls
`markdown()`; nothing here runs at CLI start-up)."""

from __future__ import annotations

import enum
import inspect
import typing
from pathlib import Path
from typing import Any

__all__ = ["markdown"]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _param_row(ctx: Any, param: Any) -> str:
    if param.param_type_name == "argument":
        names = f"`{param.metavar or param.name.upper()}`"
        help_text = getattr(param, "help", None) or ""
        default = ""
    else:
        names = ", ".join(f"`{n}`" for n in [*param.opts, *param.secondary_opts])
        help_text = param.help or ""
        shown = param.default not in (None, False, ()) and param.show_default is not False
        default = f"`{param.default}`" if shown else ""
    return f"| {names} | {_kind(param)} | {_cell(help_text)} | {default} |"


_NAMES = {str: "text", int: "integer", float: "number", bool: "flag", Path: "path"}


def _kind(param: Any) -> str:
    """The value a parameter takes: `flag`, `text`, or its choices (typer or plain click)."""
    if getattr(param, "is_flag", False):
        return "flag"
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    if annotation is None:  # plain click
        choices = getattr(param.type, "choices", None)
        if choices:
            return " \\| ".join(f"`{c}`" for c in choices)
        return str(param.type.name)
    inner = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
    base = inner[0]
    if typing.get_origin(base) is list:
        base = typing.get_args(base)[0]
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return " \\| ".join(f"`{m.value}`" for m in base)
    word = _NAMES.get(base, "text") if isinstance(base, type) else "text"
    return word + (
        " (repeatable)"
        if getattr(param, "multiple", False) or getattr(param, "nargs", 1) == -1
        else ""
    )


def _command(group_ctx: Any, name: str, command: Any, prefix: str = "mcpkit") -> list[str]:
    ctx = type(group_ctx)(command, info_name=name, parent=group_ctx)
    usage = " ".join(command.collect_usage_pieces(ctx))
    path = f"{prefix} {name}"
    lines = [f"## {path}", "", f"```\n{path} {usage}\n```", ""]
    lines += [inspect.cleandoc(command.help or ""), ""]
    params = [p for p in command.get_params(ctx) if p.name != "help"]
    if params:
        lines += ["| argument / option | type | meaning | default |", "| --- | --- | --- | --- |"]
        lines += [_param_row(ctx, p) for p in params]
        lines.append("")
    for sub_name, sub in getattr(command, "commands", {}).items():  # a group: its commands
        lines += _command(ctx, sub_name, sub, path)
    return lines


def markdown() -> str:
    """Every `mcpkit` command: usage, help and the table of its arguments and options."""
    import typer.main

    from .main import app

    root = typer.main.get_command(app)
    ctx = root.make_context("mcpkit", ["--help"], resilient_parsing=True)
    lines = [
        "# CLI reference",
        "",
        "Generated from the `mcpkit` command itself when the site is built "
        "(`mcpkit COMMAND --help` shows the same).",
        "",
        inspect.cleandoc(root.help or ""),
        "",
    ]
    commands = getattr(root, "commands", {})
    for name in commands:
        lines += _command(ctx, name, commands[name])
    return "\n".join(lines).rstrip() + "\n"
