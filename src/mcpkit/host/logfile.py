"""The host's log file: what servers print besides the protocol (invalid stdout lines, their
stderr) and every link state change go here, not into the conversation."""

from __future__ import annotations

import logging
from pathlib import Path

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class LogFile:
    """While open, mcpkit's log records go to `path` (and no longer reach the terminal)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._handler: logging.Handler | None = None
        self._saved: tuple[bool, int] = (True, logging.NOTSET)

    def open(self) -> None:
        if self._handler is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(self.path, encoding="utf-8")
        handler.setFormatter(logging.Formatter(_FORMAT))
        logger = logging.getLogger("mcpkit")
        self._saved = (logger.propagate, logger.level)
        logger.addHandler(handler)
        logger.propagate = False
        if logger.level == logging.NOTSET or logger.level > logging.INFO:
            logger.setLevel(logging.INFO)
        self._handler = handler

    def close(self) -> None:
        handler, self._handler = self._handler, None
        if handler is None:
            return
        logger = logging.getLogger("mcpkit")
        logger.removeHandler(handler)
        logger.propagate, level = self._saved
        logger.setLevel(level)
        handler.close()
