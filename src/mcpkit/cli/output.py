"""How the CLI prints results: rich tables for humans, plain text or JSON for scripts."""

from __future__ import annotations

import base64
import binascii
import sys
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

import orjson

from ..protocol.jsonrpc import Notification
from ..protocol.versions import META_SERVER_INFO

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "content_text",
    "contents_text",
    "logs_at",
    "print_discover",
    "print_error",
    "print_json",
    "print_list",
    "prompt_text",
    "show_notification",
    "stderr_console",
    "stdout_console",
]


def stdout_console() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


@cache
def stderr_console() -> Console:
    """One console for stderr (it follows `sys.stderr`), shared with the spinner."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def print_error(message: str) -> None:
    """One red line on stderr: the whole message, its lines joined (never cut)."""
    from rich.markup import escape

    from .errors import one_line

    stderr_console().print(f"[bold red]error:[/] {escape(one_line(message))}")


def print_json(value: Any) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")


def _block_text(block: Any) -> str:
    if not isinstance(block, dict):
        return orjson.dumps(block).decode()
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind}: {block.get('mimeType', '?')}, {_decoded_size(block.get('data'))} bytes]"
    if kind == "resource_link":
        return f"[resource link: {block.get('uri', '?')}]"
    if kind == "resource":
        resource = block.get("resource")
        if isinstance(resource, dict):
            if isinstance(resource.get("text"), str):
                return str(resource["text"])
            return f"[resource: {resource.get('uri', '?')}, {resource.get('mimeType', '?')}]"
    return orjson.dumps(block).decode()


def _decoded_size(data: Any) -> int:
    if not isinstance(data, str):
        return 0
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return 0


def content_text(result: dict[str, Any]) -> str:
    """The plain text of a tool/prompt/resource result, one block per line.

    Falls back to `structuredContent` as JSON when there are no content blocks.
    """
    blocks = result.get("content")
    if isinstance(blocks, list) and blocks:
        return "\n".join(_block_text(block) for block in blocks)
    structured = result.get("structuredContent")
    if structured is not None:
        return orjson.dumps(structured, option=orjson.OPT_INDENT_2).decode()
    return ""


def print_discover(result: dict[str, Any]) -> None:
    console = stdout_console()
    from rich.markup import escape

    meta = result.get("_meta")
    info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
    if isinstance(info, dict):
        title = info.get("title") or info.get("name", "?")
        console.print(f"[bold]{escape(str(title))}[/] {escape(str(info.get('version', '')))}")
    versions = result.get("supportedVersions") or []
    console.print(f"[dim]protocol versions:[/] {escape(', '.join(map(str, versions)))}")
    caps = result.get("capabilities")
    names = ", ".join(sorted(caps)) if isinstance(caps, dict) else ""
    console.print(f"[dim]capabilities:[/] {escape(names or 'none')}")
    instructions = result.get("instructions")
    if isinstance(instructions, str) and instructions.strip():
        console.print(f"[dim]instructions:[/] {escape(instructions.strip())}")


def _first_line(value: Any) -> str:
    text = value if isinstance(value, str) else ""
    return text.strip().splitlines()[0] if text.strip() else ""


def _tool_args(tool: dict[str, Any]) -> str:
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return ""
    required = schema.get("required") if isinstance(schema, dict) else None
    needed = set(required) if isinstance(required, list) else set()
    return ", ".join(f"{name}{'*' if name in needed else ''}" for name in props)


def _prompt_args(prompt: dict[str, Any]) -> str:
    args = prompt.get("arguments")
    if not isinstance(args, list):
        return ""
    return ", ".join(
        f"{a.get('name', '?')}{'*' if a.get('required') else ''}"
        for a in args
        if isinstance(a, dict)
    )


_COLUMNS: dict[str, tuple[str, ...]] = {
    "tools": ("Name", "Arguments (* required)", "Description"),
    "resources": ("URI", "Name", "MIME type", "Description"),
    "prompts": ("Name", "Arguments (* required)", "Description"),
    "templates": ("URI template", "Name", "Description"),
}


def _row(kind: str, item: dict[str, Any]) -> tuple[str, ...]:
    desc = _first_line(item.get("description"))
    name = str(item.get("name", ""))
    if kind == "tools":
        return name, _tool_args(item), desc
    if kind == "prompts":
        return name, _prompt_args(item), desc
    if kind == "resources":
        return str(item.get("uri", "")), name, str(item.get("mimeType", "")), desc
    return str(item.get("uriTemplate", "")), name, desc


def print_list(kind: str, items: list[dict[str, Any]]) -> None:
    """A table of tools, resources, prompts or templates."""
    from rich.table import Table
    from rich.text import Text

    console = stdout_console()
    if not items:
        console.print(f"[dim]no {kind}[/]")
        return
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for column in _COLUMNS[kind]:
        table.add_column(column, overflow="fold")
    for item in items:
        table.add_row(*(Text(cell) for cell in _row(kind, item)))
    console.print(table)


def show_notification(message: Notification) -> None:
    """Server log messages and progress go to stderr, so stdout stays scriptable."""
    from rich.markup import escape

    params = message.params or {}
    if message.method == "notifications/message":
        data = params.get("data")
        text = data if isinstance(data, str) else orjson.dumps(data).decode()
        source = f" {params['logger']}" if isinstance(params.get("logger"), str) else ""
        line = (
            f"[dim]\\[{escape(str(params.get('level', 'info')))}{escape(source)}][/] {escape(text)}"
        )
    elif message.method == "notifications/progress":
        total = params.get("total")
        done = f"{params.get('progress', '?')}" + (f"/{total}" if total is not None else "")
        note = params.get("message")
        line = f"[dim]progress {escape(done)}[/]"
        if isinstance(note, str) and note:
            line += f" {escape(note)}"
    else:
        return
    stderr_console().print(line)


def show_progress(progress: float, total: float | None, message: str | None) -> None:
    """A progress notification for the call in flight, on stderr."""
    params: dict[str, Any] = {"progress": progress, "total": total, "message": message}
    show_notification(Notification("notifications/progress", params))


def logs_at(level: str | None) -> Callable[[str, Any, str | None], None]:
    """The CLI's one rule for server logs, whatever the protocol version: none unless asked
    for (`--log-level`), then those at or above the level. A 2026-07-28 server sends only
    what was asked for (LOG-03); a 2025-11-25 one may send logs unasked, or ignore
    `logging/setLevel`, so the level is applied here too."""
    from ..protocol.meta import LOG_LEVEL_RANK

    least = LOG_LEVEL_RANK[level] if level is not None else None

    def show(at: str, data: Any, logger: str | None) -> None:
        if least is not None and LOG_LEVEL_RANK.get(at, least) >= least:
            show_log(at, data, logger)

    return show


def show_log(level: str, data: Any, logger: str | None) -> None:
    """A server log message, on stderr."""
    params: dict[str, Any] = {"level": level, "data": data}
    if logger is not None:
        params["logger"] = logger
    show_notification(Notification("notifications/message", params))


def contents_text(contents: list[dict[str, Any]]) -> str:
    """`resources/read` contents as text: text as is, blobs as `[blob: MIME, N bytes]`."""
    lines = []
    for item in contents:
        if isinstance(item.get("text"), str):
            lines.append(str(item["text"]))
        else:
            mime = item.get("mimeType", "application/octet-stream")
            lines.append(
                f"[blob {item.get('uri', '')}: {mime}, {_decoded_size(item.get('blob'))} bytes]"
            )
    return "\n".join(lines)


def prompt_text(result: dict[str, Any]) -> str:
    """`prompts/get` messages, one `role: text` paragraph each."""
    lines = []
    description = result.get("description")
    if isinstance(description, str) and description.strip():
        lines.append(f"# {description.strip()}")
    for message in result.get("messages") or []:
        if isinstance(message, dict):
            role = message.get("role", "?")
            lines.append(f"{role}: {_block_text(message.get('content'))}")
    return "\n".join(lines)
