"""Tracer, meter and the span bookkeeping the server, client and host share. Imports
OpenTelemetry: loaded only when telemetry is on."""

from __future__ import annotations

import asyncio
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, Status, StatusCode

from .._version import __version__
from .config import Telemetry
from .semconv import (
    CLIENT_DURATION,
    CLIENT_MRTR_ROUNDS,
    DURATION_BUCKETS,
    ERROR_TYPE,
    MCPKIT_RESULT_TYPE,
    SERVER_DURATION,
    SERVER_MRTR_ROUNDS,
    error_attributes,
    metric_attributes,
)

__all__ = [
    "RequestInstruments",
    "ambient",
    "fail",
    "failed_as",
    "histogram",
    "meter_of",
    "result_outcome",
    "tracer_of",
]

SCOPE = "mcpkit"


def tracer_of(config: Telemetry) -> trace.Tracer:
    """mcpkit's tracer: from the given provider, else the global one (a proxy until set)."""
    provider = config.tracer_provider or trace.get_tracer_provider()
    return provider.get_tracer(SCOPE, __version__)


def meter_of(config: Telemetry) -> metrics.Meter:
    provider = config.meter_provider or metrics.get_meter_provider()
    return provider.get_meter(SCOPE, __version__)


def histogram(meter: metrics.Meter, name: str, description: str) -> metrics.Histogram:
    """A duration histogram in seconds, with the conventions' bucket boundaries."""
    return meter.create_histogram(
        name,
        unit="s",
        description=description,
        explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
    )


_NAMES = {
    "server": (SERVER_DURATION, SERVER_MRTR_ROUNDS),
    "client": (CLIENT_DURATION, CLIENT_MRTR_ROUNDS),
}


class RequestInstruments:
    """What both sides keep per request: the tracer, the duration histogram and the counter
    of MRTR rounds (`input_required` answers)."""

    def __init__(self, config: Telemetry, side: str) -> None:
        self.config = config
        self.tracer = tracer_of(config)
        self.meter = meter_of(config)
        duration, rounds = _NAMES[side]
        self.duration = histogram(
            self.meter, duration, f"MCP request duration as observed on the {side}"
        )
        self.rounds = self.meter.create_counter(
            rounds,
            unit="{round}",
            description="Requests answered input_required (multi round-trip input)",
        )


def fail(span: Span, attrs: dict[str, Any], exc: BaseException) -> None:
    """Mark a span failed by `exc`: `error.type` (and the JSON-RPC code) on the span and in
    `attrs` (the metric's), status ERROR with the error's message; a cancelled request is
    `error.type` "cancelled"."""
    if isinstance(exc, asyncio.CancelledError):
        failed_as(span, attrs, "cancelled", "the request was cancelled")
        return
    extra, description = error_attributes(exc)
    attrs.update(extra)
    span.set_attributes(extra)
    span.set_status(Status(StatusCode.ERROR, description))


def failed_as(span: Span, attrs: dict[str, Any], error_type: str, description: str) -> None:
    """Mark a span failed without an exception (a tool error, a denied call)."""
    attrs[ERROR_TYPE] = error_type
    span.set_attribute(ERROR_TYPE, error_type)
    span.set_status(Status(StatusCode.ERROR, description))


def result_outcome(
    span: Span, attrs: dict[str, Any], result: dict[str, Any], rounds: metrics.Counter
) -> None:
    """What a result says beyond success: an MRTR round (`input_required`, counted in
    `rounds`), a task started, or a tool's own failure (`error.type` "tool_error")."""
    kind = result.get("resultType")
    if kind == "input_required" or kind == "task":
        attrs[MCPKIT_RESULT_TYPE] = kind
        span.set_attribute(MCPKIT_RESULT_TYPE, kind)
        if kind == "input_required":
            rounds.add(1, metric_attributes(attrs))
    elif result.get("isError") is True:
        failed_as(span, attrs, "tool_error", "the tool reported an error")


def ambient() -> Context | None:
    """The current context when it holds a valid span (an enclosing HTTP server span...)."""
    span = trace.get_current_span()
    return None if not span.get_span_context().is_valid else trace.set_span_in_context(span)
