"""uvicorn, with the host told the moment it is asked to stop (Ctrl-C, SIGTERM), before the
server waits for requests still in flight: the host answers them at once rather than letting
uvicorn wait out its graceful-shutdown time, cancel them and print a traceback per request."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import FrameType

import uvicorn


class Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_exit: Callable[[], None]) -> None:
        super().__init__(config)
        self._loop = asyncio.get_running_loop()
        self._on_exit = on_exit

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        # A signal handler: the loop runs the callback at its next turn.
        self._loop.call_soon_threadsafe(self._on_exit)
