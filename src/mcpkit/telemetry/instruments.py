"""Tracer, meter and the span bookkeeping the server, client and host share. Imports
OpenTelemetry: loaded only when telemetry is on."""

from __future__ import annotations

from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, Status, StatusCode

from .._version import __version__
from .config import Telemetry
from .semconv import DURATION_BUCKETS, ERROR_TYPE, error_attributes

__all__ = ["ambient", "fail", "failed_as", "histogram", "meter_of", "tracer_of"]

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


def fail(span: Span, attrs: dict[str, Any], exc: BaseException) -> None:
    """Mark a span failed by `exc`: `error.type` (and the JSON-RPC code) on the span and in
    `attrs` (the metric's), status ERROR with the error's message."""
    extra, description = error_attributes(exc)
    attrs.update(extra)
    span.set_attributes(extra)
    span.set_status(Status(StatusCode.ERROR, description))


def failed_as(span: Span, attrs: dict[str, Any], error_type: str, description: str) -> None:
    """Mark a span failed without an exception (a tool error, a denied call)."""
    attrs[ERROR_TYPE] = error_type
    span.set_attribute(ERROR_TYPE, error_type)
    span.set_status(Status(StatusCode.ERROR, description))


def ambient() -> Context | None:
    """The current context when it holds a valid span (an enclosing HTTP server span...)."""
    span = trace.get_current_span()
    return None if not span.get_span_context().is_valid else trace.set_span_in_context(span)
