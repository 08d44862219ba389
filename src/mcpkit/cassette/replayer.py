"""The replay's state machine, no I/O: a message of the client in, the messages to send it out.

A request is answered as recorded (`matching.request_key`): what the server sent during the
exchange first (progress, logs, and its own requests, each waiting for the client's answer),
then the response. What the client chose afresh in this run goes back in place of what the
recorded client chose: the JSON-RPC id, the progress token, the idempotency key (in the
progress notifications and wherever the server echoed them). What the server minted (handles,
task ids, cursors, `requestState`) is replayed as recorded, so the requests that carry it
back match. Equal requests are answered in the order they were recorded; once all were served
the last answer repeats (a host lists tools more often than it did while recording).

A request the cassette does not hold gets a JSON-RPC error naming the method and the closest
recorded request: -32601 when the method was never recorded, else -32602.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..protocol.idempotency import IDEMPOTENCY_KEY
from .exchanges import Exchange, Step, group, id_key, progress_token
from .format import Cassette
from .matching import closest, describe, request_key
from .redact import Redactor

__all__ = ["Replayer"]

#: Strings at least this long are swapped wherever they appear (keys, tokens); shorter ones
#: only where the protocol puts them (`progressToken`), lest "1" be swapped everywhere.
_SWAP_ANYWHERE = 8


@dataclass(slots=True)
class _Run:
    exchange: Exchange
    request_id: Any  # this run's id; None for a notification
    swaps: dict[str, Any] = field(default_factory=dict)  # recorded value (id_key) → this run's
    position: int = 0


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


class Replayer:
    def __init__(self, cassette: Cassette, redactor: Redactor | None = None) -> None:
        self.name = cassette.path
        self.redactor = redactor or Redactor(cassette.header.get("redact") or ())
        self._recorded: dict[str, list[Exchange]] = {}
        for exchange in group(cassette.entries):
            key = request_key(exchange.request, self.redactor)
            self._recorded.setdefault(key, []).append(exchange)
        self._served: dict[str, int] = {}
        self._waiting: dict[str, tuple[_Run, Step]] = {}  # our request id → run, step
        self._ids = itertools.count(1)

    def receive(self, message: Any) -> list[dict[str, Any]]:
        if not isinstance(message, dict) or not isinstance(message.get("method", ""), str):
            return [_error(None, -32600, "Invalid Request: a message is one JSON-RPC object")]
        if "method" not in message:
            return self._answered(message)
        if "id" not in message:
            return self._notified(message)
        exchange = self._next(message)
        if exchange is None:
            if message["method"] == "ping":
                return [{"jsonrpc": "2.0", "id": message["id"], "result": {}}]
            return [self._missing(message)]
        return self._advance(_Run(exchange, message["id"], _swaps(exchange.request, message)))

    def _next(self, message: dict[str, Any]) -> Exchange | None:
        key = request_key(message, self.redactor)
        recorded = self._recorded.get(key)
        if not recorded:
            return None
        served = self._served.get(key, 0)
        self._served[key] = served + 1
        return recorded[min(served, len(recorded) - 1)]

    def _notified(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        if message["method"] == "notifications/cancelled":
            params = message.get("params")
            cancelled = params.get("requestId") if isinstance(params, dict) else None
            for key, (run, _) in list(self._waiting.items()):
                if run.request_id == cancelled:
                    del self._waiting[key]
            return []
        exchange = self._next(message)  # a notification the cassette lacks changes nothing
        return [] if exchange is None else self._advance(_Run(exchange, None))

    def _answered(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        waiting = self._waiting.pop(id_key(message.get("id")), None)
        if waiting is None:
            return []  # the answer to a request of a cancelled run
        run, step = waiting
        if step.answer is not None and _outcome(self.redactor, step.answer) != _outcome(
            self.redactor, message
        ):
            if run.request_id is None:
                return []
            asked = describe(step.message)
            return [
                _error(
                    run.request_id,
                    -32602,
                    f"replay: the answer to {asked} differs from the recorded one, so "
                    f"{describe(run.exchange.request)} has no recorded outcome in {self.name}; "
                    "record again with this answer",
                    {"recorded": step.answer.get("result", step.answer.get("error"))},
                )
            ]
        return self._advance(run)

    def _advance(self, run: _Run) -> list[dict[str, Any]]:
        out = []
        steps = run.exchange.steps
        while run.position < len(steps):
            step = steps[run.position]
            run.position += 1
            message = _rewrite(step.message, run.swaps)
            out.append(message)
            if "id" in message:  # the server's own request: go on once the client answers
                message["id"] = next(self._ids)
                self._waiting[id_key(message["id"])] = (run, step)
                return out
        response = run.exchange.response
        if response is not None and run.request_id is not None:
            out.append({**_rewrite(response, run.swaps), "id": run.request_id})
        return out

    def _missing(self, message: dict[str, Any]) -> dict[str, Any]:
        method = str(message["method"])
        key = request_key(message, self.redactor)
        pairs = ((k, exs[0].request) for k, exs in self._recorded.items())
        near = closest(key, method, pairs)
        what = f"replay: {describe(message)} is not in the cassette {self.name}"
        if near is None or near.get("method") != method:
            held = sorted({str(exs[0].request.get("method")) for exs in self._recorded.values()})
            return _error(
                message["id"],
                -32601,
                f"{what}: it holds no {method} (it holds {', '.join(held) or 'nothing'}); "
                "record the server again with this request",
            )
        return _error(
            message["id"],
            -32602,
            f"{what}; the closest recorded request is {describe(near)}; "
            "record the server again with this request",
            {"closest": near.get("params")},
        )


def _outcome(redactor: Redactor, answer: dict[str, Any]) -> bytes:
    """What an answer says, as the cassette would hold it (no id, no `_meta`)."""
    body = answer.get("result", answer.get("error"))
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k != "_meta"}
    return orjson.dumps(redactor.value(body), option=orjson.OPT_SORT_KEYS)


def _swaps(recorded: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
    """This run's values for what the recorded client chose: id, progress token, idem key."""
    pairs = [
        (recorded.get("id"), current.get("id")),
        (progress_token(recorded), progress_token(current)),
        (_idempotency_key(recorded), _idempotency_key(current)),
    ]
    return {id_key(old): new for old, new in pairs if old is not None and new is not None}


def _idempotency_key(message: dict[str, Any]) -> Any:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(IDEMPOTENCY_KEY) if isinstance(meta, dict) else None


def _rewrite(value: Any, swaps: dict[str, Any], name: str = "") -> Any:
    """A fresh copy of `value` with the recorded client's choices swapped for this run's."""
    if isinstance(value, dict):
        return {k: _rewrite(v, swaps, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite(v, swaps) for v in value]
    if swaps and isinstance(value, str | int) and not isinstance(value, bool):
        anywhere = isinstance(value, str) and len(value) >= _SWAP_ANYWHERE
        if anywhere or name in ("progressToken", "requestId"):
            return swaps.get(id_key(value), value)
    return value
