"""Whether telemetry is on, and with which OpenTelemetry providers. No OpenTelemetry import.

    Server("shop", telemetry=True)                     # the global providers (see below)
    Client(url, telemetry=Telemetry(tracer_provider=tp, meter_provider=mp))
    MCPKIT_TELEMETRY=1 python server.py                # the same as telemetry=True

With `telemetry=True` (or `MCPKIT_TELEMETRY=1`) mcpkit uses OpenTelemetry's global tracer and
meter providers. When the application has not set them when serving starts, mcpkit sets them
from the standard `OTEL_*` environment (`mcpkit.telemetry.setup`): OTLP over HTTP by default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ENV_TELEMETRY", "Telemetry", "TelemetryError", "resolve"]

ENV_TELEMETRY = "MCPKIT_TELEMETRY"
_ON = ("1", "true", "yes", "on")
_OFF = ("", "0", "false", "no", "off")


class TelemetryError(RuntimeError):
    """Telemetry cannot start: OpenTelemetry missing, or an `OTEL_*` setting mcpkit cannot
    honour. The message is one line: what, why, what to do."""


@dataclass(frozen=True, slots=True)
class Telemetry:
    """Telemetry settings of one server, client or host.

    `tracer_provider` / `meter_provider`: OpenTelemetry SDK providers; None uses the global
    ones (set from the `OTEL_*` environment when the application has not set them).
    `baggage`: a client forwards W3C baggage in `_meta` (the host turns it off for servers it
    does not trust, unless their config says `"baggage": true`).
    `service_name`: the `service.name` when mcpkit sets the global providers up itself
    (`OTEL_SERVICE_NAME` wins); None: the server's name, or "mcpkit-host"/"mcpkit-client"."""

    tracer_provider: Any = None
    meter_provider: Any = None
    baggage: bool = True
    service_name: str | None = None

    @property
    def uses_globals(self) -> bool:
        return self.tracer_provider is None or self.meter_provider is None


def enabled_by_env(environ: Mapping[str, str] | None = None) -> bool:
    """`MCPKIT_TELEMETRY` as a boolean (unset: off)."""
    text = (os.environ if environ is None else environ).get(ENV_TELEMETRY, "")
    lowered = text.strip().lower()
    if lowered in _ON:
        return True
    if lowered in _OFF:
        return False
    raise TelemetryError(
        f"{ENV_TELEMETRY}={text!r} is not valid: expected one of 1/0, true/false, yes/no, on/off"
    )


def resolve(setting: bool | Telemetry | None) -> Telemetry | None:
    """The telemetry of a component given `telemetry=`: None reads `MCPKIT_TELEMETRY`; False
    is off; True uses the global providers; a `Telemetry` is used as given."""
    if setting is None:
        setting = enabled_by_env()
    if setting is False:
        return None
    if setting is True:
        setting = Telemetry()
    if not isinstance(setting, Telemetry):
        raise TypeError(f"telemetry= takes a bool or a Telemetry, not {type(setting).__name__}")
    _require_opentelemetry()
    return setting


def _require_opentelemetry() -> None:
    try:
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        raise TelemetryError(
            "telemetry is on but OpenTelemetry is not installed: pip install 'mcpkit[otel]' "
            f"(or turn it off: unset {ENV_TELEMETRY})"
        ) from None
