"""When a request is a recorded one: the same method, name (tool, prompt, resource URI) and
arguments, ignoring what differs from run to run: the JSON-RPC id, `_meta` (progress token,
idempotency key, trace context, client info; the protocol version is kept) and `requestState`
(MRTR's sealed state; the answers of `inputResponses` do count). An `initialize` matches any
`initialize`. Secrets are compared redacted, as the cassette holds them. No I/O.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

import orjson

from ..protocol.versions import META_PROTOCOL_VERSION
from .redact import Redactor

__all__ = ["closest", "describe", "request_key"]

#: Fields of `params` that differ between runs and never decide a match. `requestState` is
#: the server's opaque string (MRTR-07) that the client echoes (MRTR-17): the replay gave out
#: the recorded one anyway; the retry's `inputResponses` (MRTR-22) do decide.
VOLATILE = ("_meta", "requestState")


def _params(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def request_key(message: dict[str, Any], redactor: Redactor) -> str:
    params = _params(message)
    meta = params.get("_meta")
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    method = message.get("method")
    kept = {} if method == "initialize" else {k: v for k, v in params.items() if k not in VOLATILE}
    body = {"method": method, "version": version, "params": redactor.value(kept)}
    return orjson.dumps(body, option=orjson.OPT_SORT_KEYS).decode()


def describe(message: dict[str, Any], limit: int = 160) -> str:
    """`tools/call read_file {"path":"/srv/a.txt"}`: what a reader needs to tell requests apart."""
    params = _params(message)
    subject = params.get("name") or params.get("uri")
    text = str(message.get("method")) + (f" {subject}" if isinstance(subject, str) else "")
    rest = params.get("arguments") if subject else None
    if rest is None and not subject:
        rest = {k: v for k, v in params.items() if k not in VOLATILE} or None
    if rest:
        shown = orjson.dumps(rest, option=orjson.OPT_SORT_KEYS).decode()
        text += " " + (shown if len(shown) <= limit else shown[: limit - 1] + "…")
    return text


def closest(
    key: str, method: str, recorded: Iterable[tuple[str, dict[str, Any]]]
) -> dict[str, Any] | None:
    """The recorded request most like the one of `key`: of the same method if any."""
    pairs = list(recorded)
    same = [pair for pair in pairs if pair[1].get("method") == method] or pairs
    if not same:
        return None
    best = max(same, key=lambda pair: difflib.SequenceMatcher(None, key, pair[0]).ratio())
    return best[1]
