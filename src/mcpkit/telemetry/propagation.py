"""Trace context in `_meta` (BASE-53): W3C `traceparent`/`tracestate` and W3C `baggage`.

Exactly those three keys, in those formats, whatever propagators the application configured
(the protocol reserves no other unprefixed keys). Imports OpenTelemetry: loaded only when
telemetry is on.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.context import Context
from opentelemetry.propagators.textmap import Getter
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from ..protocol.tracecontext import TRACE_KEYS, valid_baggage, valid_traceparent

__all__ = ["extract", "inject"]

_TRACE = TraceContextTextMapPropagator()
_BAGGAGE = W3CBaggagePropagator()


class _MetaGetter(Getter[Mapping[str, Any]]):
    """Reads `_meta`: string values only (anything else is not trace context)."""

    def get(self, carrier: Mapping[str, Any], key: str) -> list[str] | None:
        value = carrier.get(key)
        return [value] if type(value) is str else None

    def keys(self, carrier: Mapping[str, Any]) -> list[str]:
        return [k for k in TRACE_KEYS if k in carrier]


_GETTER = _MetaGetter()


def extract(meta: Mapping[str, Any], context: Context | None = None) -> Context | None:
    """`context` (default: the current one) with the remote parent and the baggage that
    `meta` carries; None when it carries neither validly. Malformed values are ignored,
    never an error (a request is served without a parent rather than refused)."""
    parent = valid_traceparent(meta.get("traceparent"))
    bags = valid_baggage(meta.get("baggage"))
    if not parent and not bags:
        return None
    try:
        if parent:
            context = _TRACE.extract(meta, context, getter=_GETTER)
        if bags:
            context = _BAGGAGE.extract(meta, context, getter=_GETTER)
    except Exception:  # a propagator that chokes on odd input: serve without it
        return None
    return context


def inject(meta: MutableMapping[str, Any], *, baggage: bool) -> None:
    """Put the current span's context (and, with `baggage`, the current baggage) in `meta`,
    replacing whatever trace context it held."""
    for key in TRACE_KEYS:
        meta.pop(key, None)
    _TRACE.inject(meta)
    if baggage:
        _BAGGAGE.inject(meta)
