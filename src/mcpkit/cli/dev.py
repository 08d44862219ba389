"""`mcpkit dev TARGET`: one server (a `server.py` file, a command, or a URL) in the web UI's
inspector, with no model key needed; a server file is watched and its server restarted when
the file is saved (a syntax error is one line in the page, the last good server keeps running).
"""

from __future__ import annotations

import contextlib
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import typer

from .client_commands import TargetArg
from .errors import CLIError
from .host import AllowOpt, BaseUrlOpt, ModelOpt, OpenOpt, WebPortOpt


def dev_server(target: str | None, tail: list[str] | None) -> tuple[dict[str, Any], Path | None]:
    """The server's `mcpServers` entry, its name under `"name"`, and the file to watch (for a
    `.py` file). Raises ValueError (one line)."""
    from .arguments import resolve_target
    from .loader import split_spec

    resolved = resolve_target(target, tail)
    text = target if target is not None else (tail[0] if tail and len(tail) == 1 else None)
    path, obj = split_spec(text.strip()) if text is not None else ("", None)
    if path.endswith(".py") and not any(c.isspace() for c in path):
        file = Path(path)
        if not file.is_file():
            raise ValueError(f"no server file {path} (give a .py file that exists, or a command)")
        spec = str(file.resolve()) + (f":{obj}" if obj else "")
        argv = [sys.executable, "-m", "mcpkit", "run", spec, "--quiet"]
        return _entry(_name(file.stem), argv), file.resolve()
    if isinstance(resolved, str) and resolved.startswith(("http://", "https://")):
        from urllib.parse import urlsplit

        return {"name": _name(urlsplit(resolved).hostname or ""), "url": resolved}, None
    argv = shlex.split(resolved) if isinstance(resolved, str) else list(resolved)
    if not argv:
        raise ValueError("no command: give the server's command, a server.py file, or a URL")
    words = [a for a in argv[1:] if not a.startswith("-")] or argv[:1]
    return _entry(_name(_package(words[-1])), argv), None


def _entry(name: str, argv: list[str]) -> dict[str, Any]:
    return {"name": name, "command": argv[0], "args": argv[1:]}


#: File names that say nothing of their server, and the build folders they sit in: the
#: server is named for the folder above (`node_modules/@scope/server-pdf/dist/index.js`).
_GENERIC_FILES = frozenset({"index", "main", "cli", "__main__"})
_BUILD_FOLDERS = frozenset({"dist", "build", "lib", "src", "bin", "out", ".", ".."})


def _package(word: str) -> str:
    """`@scope/server-pdf@2.0.4` → `server-pdf`; `path/to/server.js` → `server`;
    `pkg/server-pdf/dist/index.js` → `server-pdf`."""
    parts = [p for p in word.rstrip("/").split("/") if p] or [word]
    last = parts[-1]
    last = re.sub(r"@[^@]*$", "", last) if not last.startswith("@") else last
    stem = last.rsplit(".", 1)[0] if "." in last else last
    if stem in _GENERIC_FILES:
        folders = [p for p in parts[:-1] if p not in _BUILD_FOLDERS]
        if folders:
            return folders[-1]
    return stem


def _name(text: str) -> str:
    """A server name the configuration accepts (letters, digits, `_`, `-`, `.`)."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")[:40]
    return name or "server"


def dev(
    ctx: typer.Context,
    target: TargetArg = None,
    port: WebPortOpt = 0,
    open_browser: OpenOpt = True,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    allow: AllowOpt = None,
) -> None:
    """Inspect one server in your browser (tools, resources, prompts, its MCP Apps), no model
    key needed; a server.py file restarts when you save it."""
    import asyncio

    from ..host import ConsentPolicy, HostSettings, parse_config
    from ..host.paths import state_path
    from .host import optional_model

    try:
        entry, watched = dev_server(target, ctx.obj)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    name = entry.pop("name")
    cfg = parse_config({"mcpServers": {name: entry}}, source="mcpkit dev")
    # No pin file: the developer changes the tools on purpose, and each save would withhold
    # them until approved. The log goes where `mcpkit ui` writes it.
    settings = HostSettings(log=state_path("host.log"))
    llm = optional_model(model, base_url)
    policy = ConsentPolicy(allow=list(allow or []))
    asyncio.run(_serve(cfg, name, watched, llm, settings, policy, port, open_browser))


async def _serve(
    cfg: Any,
    name: str,
    watched: Path | None,
    llm: Any,
    settings: Any,
    policy: Any,
    port: int,
    open_browser: bool,
) -> None:
    """The web UI on the inspector until Ctrl-C, reloading the server file when it is saved."""
    from ..host.web import WebHost
    from ..host.web.reload import FileReloader

    try:
        web = WebHost(cfg, model=llm, settings=settings, policy=policy, port=port, view="inspector")
    except OSError as exc:
        raise CLIError(
            f"cannot listen on 127.0.0.1:{port}: {exc.strerror} (pick another --port, or 0)"
        ) from None
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(web)
        if watched is not None:  # watching before the address is out: no save is missed
            await stack.enter_async_context(FileReloader(web, name, watched))
        typer.echo(f"mcpkit dev: open {web.url}")
        watching = f"; watching {watched.name}" if watched else ""
        typer.echo(f"  server {name} ({llm.name}){watching}; Ctrl-C to stop")
        sys.stdout.flush()
        if open_browser:
            import webbrowser

            webbrowser.open(web.url)
        await web.wait_closed()
