"""OpenTelemetry's global providers from the standard `OTEL_*` environment, for processes whose
application did not set them (`mcpkit run`, `MCPKIT_TELEMETRY=1 python server.py`).

| variable | values | default |
|---|---|---|
| `OTEL_TRACES_EXPORTER` | `otlp`, `console`, `none` | `otlp` |
| `OTEL_METRICS_EXPORTER` | `otlp`, `prometheus`, `console`, `none` (comma-separated) | `otlp` |
| `OTEL_EXPORTER_OTLP_ENDPOINT` | the collector's OTLP/HTTP base URL | `http://localhost:4318` |
| `OTEL_EXPORTER_PROMETHEUS_HOST` / `_PORT` | where `/metrics` is served for scraping | `localhost`, `9464` |
| `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` | the resource | the server's name |

The exporters read their own variables too (`OTEL_EXPORTER_OTLP_HEADERS`, `..._TIMEOUT`,
`OTEL_BSP_SCHEDULE_DELAY`, `OTEL_METRIC_EXPORT_INTERVAL`, ...). OTLP goes over HTTP
(`http/protobuf`); console output goes to stderr (stdout is the stdio transport's).
Spans are batched; both providers flush when the process exits.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import Any

from .config import TelemetryError

__all__ = ["configure", "ensure_configured"]

log = logging.getLogger("mcpkit.telemetry")
_lock = threading.Lock()


def ensure_configured(service_name: str) -> None:
    """Set the global providers from the environment unless something already set them."""
    from opentelemetry import metrics, trace

    with _lock:
        tracing = _is_proxy(trace.get_tracer_provider())
        metering = _is_proxy(metrics.get_meter_provider())
        if tracing or metering:
            configure(service_name, traces=tracing, metrics=metering)


def _is_proxy(provider: Any) -> bool:
    """OpenTelemetry's placeholder until an SDK provider is set."""
    return type(provider).__name__ in ("ProxyTracerProvider", "_ProxyMeterProvider")


def configure(service_name: str, *, traces: bool = True, metrics: bool = True) -> None:
    """Build SDK providers from the `OTEL_*` environment and set them as the global ones."""
    try:
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    except ImportError:
        raise TelemetryError(
            "telemetry is on but the OpenTelemetry SDK is not installed: pip install 'mcpkit[otel]'"
        ) from None
    protocol = os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    if protocol != "http/protobuf":
        raise TelemetryError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r}: mcpkit exports OTLP over HTTP "
            "(http/protobuf); unset it, or set the OpenTelemetry providers up yourself"
        )
    # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the default name.
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: service_name}))
    if traces:
        _tracing(resource)
    if metrics:
        _metrics(resource)


def _choices(variable: str, allowed: tuple[str, ...]) -> list[str]:
    names = [n.strip() for n in os.environ.get(variable, "otlp").split(",") if n.strip()]
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise TelemetryError(
            f"{variable}={os.environ[variable]!r}: mcpkit knows {', '.join(allowed)}; "
            "set the OpenTelemetry providers up yourself for others"
        )
    return [n for n in names if n != "none"]


def _tracing(resource: Any) -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    provider = TracerProvider(resource=resource)
    for name in _choices("OTEL_TRACES_EXPORTER", ("otlp", "console", "none")):
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        else:
            provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
    trace.set_tracer_provider(provider)


def _metrics(resource: Any) -> None:
    from opentelemetry import metrics
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        ConsoleMetricExporter,
        MetricReader,
        PeriodicExportingMetricReader,
    )

    readers: list[MetricReader] = []
    for name in _choices("OTEL_METRICS_EXPORTER", ("otlp", "prometheus", "console", "none")):
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

            readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
        elif name == "prometheus":
            readers.append(prometheus_reader())
        else:
            readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter(out=sys.stderr)))
    metrics.set_meter_provider(MeterProvider(metric_readers=readers, resource=resource))


def prometheus_reader() -> Any:
    """A reader whose metrics Prometheus scrapes from `http://HOST:PORT/metrics`
    (`OTEL_EXPORTER_PROMETHEUS_HOST`, default localhost; `_PORT`, default 9464)."""
    try:
        from opentelemetry.exporter.prometheus import PrometheusMetricReader
        from prometheus_client import start_http_server
    except ImportError:
        raise TelemetryError(
            "OTEL_METRICS_EXPORTER=prometheus needs the Prometheus exporter: "
            "pip install 'mcpkit[otel]'"
        ) from None
    host = os.environ.get("OTEL_EXPORTER_PROMETHEUS_HOST", "localhost")
    text = os.environ.get("OTEL_EXPORTER_PROMETHEUS_PORT", "9464")
    try:
        port = int(text)
    except ValueError:
        raise TelemetryError(
            f"OTEL_EXPORTER_PROMETHEUS_PORT={text!r} is not valid: expected a port number"
        ) from None
    try:
        start_http_server(port, addr=host)
    except OSError as exc:
        raise TelemetryError(
            f"cannot serve Prometheus metrics on {host}:{port} ({exc.strerror}): "
            "set OTEL_EXPORTER_PROMETHEUS_PORT to a free port"
        ) from None
    log.info("Prometheus metrics on http://%s:%d/metrics", host, port)
    return PrometheusMetricReader()
