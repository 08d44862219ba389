"""A recorded message log as exchanges: each message of the client with what the server sent
because of it, in order, and the client's answers to the server's own requests (2025-11-25:
`elicitation/create`, `sampling/createMessage`, `roots/list`, `ping`). No I/O.

A server message belongs to the request whose progress token it carries, else to the latest
request still open, else to the latest notification of the client (the `roots/list` a server
sends after `notifications/initialized`). With none of these the client did not cause it, and
replay leaves it out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..protocol.versions import PROGRESS_TOKEN
from .format import Entry

__all__ = ["Exchange", "Step", "group", "id_key", "progress_token"]


@dataclass(slots=True)
class Step:
    """A message the server sent during an exchange; `answer` is the client's, when the
    message was a request."""

    message: dict[str, Any]
    answer: dict[str, Any] | None = None


@dataclass(slots=True)
class Exchange:
    request: dict[str, Any]  # the client's request or notification
    steps: list[Step] = field(default_factory=list)
    #: The server's answer (None for a notification, or a request never answered).
    response: dict[str, Any] | None = None


def id_key(value: Any) -> str:
    """An id (or token) as a dict key: 1 and "1" stay apart."""
    return orjson.dumps(value).decode()


def progress_token(message: dict[str, Any]) -> Any:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(PROGRESS_TOKEN) if isinstance(meta, dict) else None


def group(entries: Iterable[Entry]) -> list[Exchange]:
    log = _Log()
    for entry in entries:
        if entry.side == "client":
            log.client(entry.message)
        else:
            log.server(entry.message)
    return log.exchanges


class _Log:
    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []
        self.open: dict[str, Exchange] = {}  # client request id → its exchange
        self.tokens: dict[str, Exchange] = {}  # progress token → its request's exchange
        self.asked: dict[str, Step] = {}  # server request id → its step, until answered
        self.notice: Exchange | None = None  # the client's latest notification

    def client(self, message: dict[str, Any]) -> None:
        if "method" in message:
            self._asked_by_client(message)
        elif (step := self.asked.pop(id_key(message.get("id")), None)) is not None:
            step.answer = message  # the client answers the server's request

    def _asked_by_client(self, message: dict[str, Any]) -> None:
        exchange = Exchange(message)
        self.exchanges.append(exchange)
        if "id" not in message:
            self.notice = exchange
            return
        self.open[id_key(message["id"])] = exchange
        token = progress_token(message)
        if token is not None:
            self.tokens[id_key(token)] = exchange

    def server(self, message: dict[str, Any]) -> None:
        if "method" not in message:  # the server answers the client's request
            exchange = self.open.pop(id_key(message.get("id")), None)
            if exchange is not None:
                exchange.response = message
            return
        owner = self._owner(message)
        if owner is None:
            return
        step = Step(message)
        owner.steps.append(step)
        if "id" in message:
            self.asked[id_key(message["id"])] = step

    def _owner(self, message: dict[str, Any]) -> Exchange | None:
        params = message.get("params")
        token = params.get(PROGRESS_TOKEN) if isinstance(params, dict) else None
        if token is not None and id_key(token) in self.tokens:
            return self.tokens[id_key(token)]
        if self.open:
            return next(reversed(self.open.values()))
        return self.notice
