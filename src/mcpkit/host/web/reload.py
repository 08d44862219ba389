"""`mcpkit dev`'s reload: watch one server file; when it is saved, check that it compiles and
restart its server; the page hears each step as a `dev` event (one line) and re-lists the
server's tools when it is back. A file that does not compile is one line in the page and the
last good server keeps running."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from ..supervision import LinkState

if TYPE_CHECKING:
    from .webhost import WebHost

log = logging.getLogger("mcpkit.host")


class FileReloader:
    def __init__(self, web: WebHost, server: str, path: Path) -> None:
        self.web = web
        self.server = server
        self.path = path.resolve()
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def __aenter__(self) -> FileReloader:
        self._task = asyncio.create_task(self._watch(), name="mcpkit-dev-reload")
        await self._ready.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def _say(self, level: str, text: str, **extra: object) -> None:
        self.web.hub.publish("dev", extra, level=level, text=text, server=self.server)

    async def _watch(self) -> None:
        import watchfiles

        # The folder, not the file: editors save by writing a new file and renaming it.
        watching = watchfiles.awatch(
            self.path.parent,
            watch_filter=lambda _, name: Path(name) == self.path,
            debounce=200,
            step=50,
            yield_on_timeout=True,
            rust_timeout=500,
        )
        try:
            async for changes in watching:
                self._ready.set()  # the first (empty) batch: the watcher runs
                if changes and self.path.is_file():
                    await self.reload()
        except OSError as exc:
            self._say("error", f"cannot watch {self.path}: {exc}; save does not reload")
        finally:
            self._ready.set()

    async def reload(self) -> None:
        """The file was saved: compile it, then restart its server and wait until it is up."""
        name = self.path.name
        try:
            compile(self.path.read_bytes(), str(self.path), "exec")
        except (SyntaxError, ValueError) as exc:
            where = f" line {exc.lineno}" if isinstance(exc, SyntaxError) and exc.lineno else ""
            why = exc.msg if isinstance(exc, SyntaxError) else str(exc)
            self._say(
                "error",
                f"{name}{where}: {why}; the last good version keeps running (fix it and save)",
            )
            return
        link = self.web.host.fleet.links[self.server]
        self._say("info", f"{name} saved: restarting {self.server}")
        link.reconnect_now()
        try:
            async with asyncio.timeout(link.config.start_deadline + 5):
                await link.until(LinkState.CONNECTING)
                state = await link.until(LinkState.READY, LinkState.DEGRADED, LinkState.DOWN)
        except TimeoutError:
            state = link.state
        if state.up:
            count = len(link.tools)
            text = f"{self.server} restarted: {count} tool{'' if count == 1 else 's'}"
            self._say("ok", text, reloaded=True)
        else:
            self._say("error", f"{self.server} did not start again: {link.detail}")
        self.web.status()
