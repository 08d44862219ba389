"""The host's OpenTelemetry: spans for each agent turn, each round, each model call and each
tool call, and their metrics. With the clients' and servers' spans they make one trace from the
model's tool call to the server's handler:

    invoke_agent support                      (a user turn)
    └── agent round                           (mcpkit.round = 1, 2, ...)
        ├── chat claude-sonnet-4-5            (the model call: gen_ai.* attributes)
        └── execute_tool warehouse__get_stock (consent, hooks, deadline, the call)
            └── tools/call get_stock          (the client's request: CLIENT span)
                └── tools/call get_stock      (the server: SERVER span, in its process)
                    └── ...                   (whatever the handler does)

Metrics: `gen_ai.client.operation.duration` and `gen_ai.client.token.usage` (model calls),
`mcpkit.host.tool_call.duration`
(by tool and outcome: ok, tool-error, error, timeout, unknown, denied) and
`mcpkit.host.consent.decisions` (allow/deny, by who decided). Loaded only when telemetry is on;
otherwise the agent uses `OFF`, whose spans are no-ops.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..telemetry.config import Telemetry
from ..telemetry.semconv import (
    EXECUTE_TOOL,
    GEN_AI_AGENT_NAME,
    GEN_AI_CLIENT_DURATION,
    GEN_AI_OPERATION_NAME,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_TOKEN_TYPE,
    GEN_AI_TOKEN_USAGE,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_NAME,
    GEN_AI_TOOL_TYPE,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    HOST_CONSENT_DECISIONS,
    HOST_TOOL_CALL_DURATION,
    MCPKIT_CONSENT_BY,
    MCPKIT_CONSENT_DECISION,
    MCPKIT_OUTCOME,
    MCPKIT_ROUND,
    MCPKIT_SERVER,
    MCPKIT_TOOL,
)

__all__ = ["OFF", "CallRecord", "HostTelemetry", "ModelRecord"]


class CallRecord:
    """What a tool call span learns while it runs (its server, tool and outcome)."""

    __slots__ = ("attrs", "outcome")

    def __init__(self, attrs: dict[str, Any]) -> None:
        self.attrs = attrs
        self.outcome: str | None = None

    def target(self, server: str, tool: str) -> None:
        self.attrs[MCPKIT_SERVER] = server
        self.attrs[MCPKIT_TOOL] = tool
        self.attrs[GEN_AI_TOOL_TYPE] = "extension"  # runs on an MCP server

    def finished(self, outcome: str) -> None:
        """ok, tool-error, error, timeout, unknown or denied (as the audit trail says)."""
        self.outcome = outcome


class ModelRecord:
    """What a model call span learns from the reply."""

    __slots__ = ("finish_reason", "usage")

    def __init__(self) -> None:
        self.finish_reason: str | None = None
        self.usage: tuple[int, int] | None = None

    def replied(self, stop_reason: str | None, usage: tuple[int, int] | None = None) -> None:
        self.finish_reason = stop_reason
        self.usage = usage


class _Off:
    """Telemetry off: every span is a no-op (the agent's code reads the same either way)."""

    @contextmanager
    def turn(self, agent: str | None) -> Iterator[None]:
        yield

    @contextmanager
    def round(self, number: int) -> Iterator[None]:
        yield

    @contextmanager
    def model_call(self) -> Iterator[ModelRecord]:
        yield ModelRecord()

    @contextmanager
    def tool_call(self, name: str, call_id: str) -> Iterator[CallRecord]:
        yield CallRecord({})

    def consent(self, server: str, tool: str, decision: str, by: str) -> None:
        return None


OFF = _Off()


class HostTelemetry(_Off):
    """Spans and metrics of one host (see the module docstring)."""

    def __init__(self, config: Telemetry, model_name: str) -> None:
        from opentelemetry.trace import SpanKind, Status, StatusCode

        from ..telemetry.instruments import histogram, meter_of, tracer_of

        self.config = config
        self._kinds = SpanKind
        self._status = (Status, StatusCode.ERROR)
        self.tracer = tracer_of(config)
        provider, _, model = model_name.partition(":")
        self.provider = provider if model else "_OTHER"
        self.model = model or model_name
        meter = meter_of(config)
        self.model_duration = histogram(
            meter, GEN_AI_CLIENT_DURATION, "Duration of the host's model calls"
        )
        self.tokens = meter.create_histogram(
            GEN_AI_TOKEN_USAGE, unit="{token}", description="Tokens used by the model calls"
        )
        self.tool_duration = histogram(
            meter, HOST_TOOL_CALL_DURATION, "Duration of the host's tool calls, consent included"
        )
        self.decisions = meter.create_counter(
            HOST_CONSENT_DECISIONS, unit="{decision}", description="Consent decisions on tool calls"
        )

    @contextmanager
    def turn(self, agent: str | None) -> Iterator[None]:
        attrs: dict[str, Any] = {GEN_AI_OPERATION_NAME: "invoke_agent"}
        attrs[GEN_AI_PROVIDER_NAME] = self.provider
        attrs[GEN_AI_REQUEST_MODEL] = self.model
        if agent:
            attrs[GEN_AI_AGENT_NAME] = agent
        name = f"invoke_agent {agent}" if agent else "invoke_agent"
        with self.tracer.start_as_current_span(name, attributes=attrs):
            yield

    @contextmanager
    def round(self, number: int) -> Iterator[None]:
        with self.tracer.start_as_current_span("agent round", attributes={MCPKIT_ROUND: number}):
            yield

    @contextmanager
    def model_call(self) -> Iterator[ModelRecord]:
        attrs: dict[str, Any] = {
            GEN_AI_OPERATION_NAME: "chat",
            GEN_AI_PROVIDER_NAME: self.provider,
            GEN_AI_REQUEST_MODEL: self.model,
        }
        record = ModelRecord()
        started = time.perf_counter()
        with self.tracer.start_as_current_span(
            f"chat {self.model}", kind=self._kinds.CLIENT, attributes=attrs
        ) as span:
            try:
                yield record
            except BaseException as exc:
                kind = type(exc)
                attrs["error.type"] = f"{kind.__module__}.{kind.__qualname__}"
                raise
            finally:
                if record.finish_reason is not None:
                    span.set_attribute(GEN_AI_RESPONSE_FINISH_REASONS, [record.finish_reason])
                if record.usage is not None:
                    used_in, used_out = record.usage
                    span.set_attributes(
                        {GEN_AI_USAGE_INPUT_TOKENS: used_in, GEN_AI_USAGE_OUTPUT_TOKENS: used_out}
                    )
                    self.tokens.record(used_in, {**attrs, GEN_AI_TOKEN_TYPE: "input"})
                    self.tokens.record(used_out, {**attrs, GEN_AI_TOKEN_TYPE: "output"})
                self.model_duration.record(time.perf_counter() - started, attrs)

    @contextmanager
    def tool_call(self, name: str, call_id: str) -> Iterator[CallRecord]:
        attrs: dict[str, Any] = {
            GEN_AI_OPERATION_NAME: EXECUTE_TOOL,
            GEN_AI_TOOL_NAME: name,
            GEN_AI_TOOL_CALL_ID: call_id,
            GEN_AI_TOOL_TYPE: "function",  # a host tool, until `target()` says otherwise
        }
        record = CallRecord(attrs)
        started = time.perf_counter()
        with self.tracer.start_as_current_span(f"{EXECUTE_TOOL} {name}", attributes=attrs) as span:
            try:
                yield record
            except BaseException:
                record.outcome = record.outcome or "error"
                raise
            finally:
                outcome = record.outcome or "ok"
                span.set_attributes({**record.attrs, MCPKIT_OUTCOME: outcome})
                if outcome != "ok":
                    error = "tool_error" if outcome == "tool-error" else outcome
                    span.set_attribute("error.type", error)
                    status, error_code = self._status
                    span.set_status(status(error_code, f"the tool call ended: {outcome}"))
                self.tool_duration.record(
                    time.perf_counter() - started,
                    {
                        GEN_AI_TOOL_NAME: name,
                        MCPKIT_OUTCOME: outcome,
                        **{k: v for k, v in record.attrs.items() if k == MCPKIT_SERVER},
                    },
                )

    def consent(self, server: str, tool: str, decision: str, by: str) -> None:
        span = self._current()
        span.set_attributes({MCPKIT_CONSENT_DECISION: decision, MCPKIT_CONSENT_BY: by})
        self.decisions.add(
            1,
            {
                MCPKIT_SERVER: server,
                MCPKIT_TOOL: tool,
                MCPKIT_CONSENT_DECISION: decision,
                MCPKIT_CONSENT_BY: by,
            },
        )

    @staticmethod
    def _current() -> Any:
        from opentelemetry import trace

        return trace.get_current_span()
