"""What the telemetry tests share: in-memory OpenTelemetry providers for this process, and a
local OTLP/HTTP receiver that server processes export their spans to (the real wire path)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcpkit.telemetry import Telemetry
from support import free_port, scaled

#: The spec's example (basic/index, "OpenTelemetry trace context").
SPEC_TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
SPEC_TRACE_ID = 0x0AF7651916CD43DD8448EB211C80319C
SPEC_PARENT_ID = 0x00F067AA0BA902B7


class Recorded:
    """In-memory providers (spans and metrics) for one test."""

    def __init__(self) -> None:
        self.spans_out = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans_out))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.telemetry = Telemetry(
            tracer_provider=self.tracer_provider, meter_provider=self.meter_provider
        )

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        found = list(self.spans_out.get_finished_spans())
        return [s for s in found if name is None or s.name == name]

    def span(self, name: str) -> ReadableSpan:
        found = self.spans(name)
        assert len(found) == 1, f"{len(found)} spans named {name!r}: {self.names()}"
        return found[0]

    def names(self) -> list[str]:
        return [s.name for s in self.spans()]

    def metrics(self) -> dict[str, list[dict[str, Any]]]:
        """Metric name → the attributes (plus `value`/`count`) of each of its data points."""
        out: dict[str, list[dict[str, Any]]] = {}
        data = self.reader.get_metrics_data()
        for rm in data.resource_metrics if data is not None else ():
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    points = out.setdefault(metric.name, [])
                    for p in metric.data.data_points:
                        point = dict(p.attributes or {})
                        if hasattr(p, "count"):
                            point["count"] = p.count
                        if hasattr(p, "value"):
                            point["value"] = p.value
                        points.append(point)
        return out

    def close(self) -> None:
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()


@dataclass
class WireSpan:
    """A span as a server process exported it over OTLP/HTTP."""

    service: str
    name: str
    kind: int  # OTLP: 2 server, 3 client, 1 internal
    trace_id: int
    span_id: int
    parent_id: int | None
    attributes: dict[str, Any] = field(default_factory=dict)


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind is not None else None


class OtlpReceiver:
    """A minimal OTLP/HTTP collector on loopback: `/v1/traces` decoded, `/v1/metrics` taken."""

    def __init__(self) -> None:
        self.spans: list[WireSpan] = []
        self.requests = 0
        self._changed = asyncio.Event()
        self.runner: web.AppRunner | None = None
        self.endpoint = ""

    async def traces(self, request: web.Request) -> web.Response:
        body = ExportTraceServiceRequest()
        body.ParseFromString(await request.read())
        self.requests += 1
        for rs in body.resource_spans:
            attrs = {a.key: _value(a.value) for a in rs.resource.attributes}
            for ss in rs.scope_spans:
                for s in ss.spans:
                    self.spans.append(
                        WireSpan(
                            str(attrs.get("service.name")),
                            s.name,
                            s.kind,
                            int.from_bytes(s.trace_id, "big"),
                            int.from_bytes(s.span_id, "big"),
                            int.from_bytes(s.parent_span_id, "big") if s.parent_span_id else None,
                            {a.key: _value(a.value) for a in s.attributes},
                        )
                    )
        self._changed.set()
        reply = ExportTraceServiceResponse().SerializeToString()
        return web.Response(body=reply, content_type="application/x-protobuf")

    async def metrics(self, request: web.Request) -> web.Response:
        await request.read()
        reply = ExportMetricsServiceResponse().SerializeToString()
        return web.Response(body=reply, content_type="application/x-protobuf")

    async def wait_for(self, *names: str, seconds: float = 20) -> None:
        """Until spans with all these names have arrived (the exporters batch them)."""
        async with asyncio.timeout(scaled(seconds)):
            while not set(names) <= {s.name for s in self.spans}:
                self._changed.clear()
                await self._changed.wait()

    def named(self, name: str) -> WireSpan:
        found = [s for s in self.spans if s.name == name]
        assert len(found) == 1, f"{len(found)} spans named {name!r}"
        return found[0]

    def env(self, service: str) -> dict[str, str]:
        """What a server process needs to export its spans here, quickly."""
        return {
            "MCPKIT_TELEMETRY": "1",
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint,
            "OTEL_SERVICE_NAME": service,
            "OTEL_BSP_SCHEDULE_DELAY": "50",
            "OTEL_METRIC_EXPORT_INTERVAL": "200",
        }

    async def __aenter__(self) -> OtlpReceiver:
        app = web.Application()
        app.router.add_post("/v1/traces", self.traces)
        app.router.add_post("/v1/metrics", self.metrics)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        port = free_port()
        await web.TCPSite(self.runner, "127.0.0.1", port).start()
        self.endpoint = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self.runner is not None
        await self.runner.cleanup()
