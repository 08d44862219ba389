"""Reading `MCPKIT_*` variables: the parser of each, with one-line errors. Small and
dataclass-free, so `Server()` can read a setting or two without loading `settings.py`."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["DEFAULTS", "ENV_PREFIX", "SettingsError", "read_setting"]

ENV_PREFIX = "MCPKIT_"
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


class SettingsError(ValueError):
    """A `MCPKIT_*` variable whose value cannot be used (one line: variable, value, expected)."""


def _int(low: int, high: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text)
        if value < low or (high is not None and value > high):
            raise ValueError
        return value

    parse.__doc__ = f"an integer from {low}" + (f" to {high}" if high is not None else " up")
    return parse


def _bool(text: str) -> bool:
    """one of 1/0, true/false, yes/no, on/off"""
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError


def _level(text: str) -> str:
    """one of debug, info, warning, error, critical"""
    lowered = text.strip().lower()
    if lowered not in LOG_LEVELS:
        raise ValueError
    return lowered


def _format(text: str) -> str:
    """one of text, json"""
    lowered = text.strip().lower()
    if lowered not in ("text", "json"):
        raise ValueError
    return lowered


def _seconds(text: str) -> float | None:
    """a number of seconds above 0 (or empty for none)"""
    if not text.strip():
        return None
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise ValueError
    return value


def _duration(text: str) -> float:
    """a number of seconds from 0 up"""
    value = float(text)
    if not value >= 0 or value == float("inf"):
        raise ValueError
    return value


def _names(text: str) -> tuple[str, ...]:
    """comma-separated names (`*` for any)"""
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise ValueError
    return names


def _prefix(text: str) -> str:
    """letters, digits, '.', '_' or '-' (at most 32)"""
    if len(text) > 32 or not all(c.isascii() and (c.isalnum() or c in "._-") for c in text):
        raise ValueError
    return text


def _str(text: str) -> str:
    """a non-empty string"""
    if not text.strip():
        raise ValueError
    return text.strip()


#: field name → how its variable's text becomes a value.
_PARSERS: dict[str, Callable[[str], Any]] = {
    "host": _str,
    "port": _int(0, 65535),
    "log_level": _level,
    "log_format": _format,
    "telemetry": _bool,
    "max_body_bytes": _int(1),
    "max_sessions": _int(1),
    "mask_errors": _bool,
    "tool_timeout": _seconds,
    "drain_timeout": _duration,
    "redis_url": _str,
    "allowed_hosts": _names,
    "session_id_prefix": _prefix,
}

#: The default of every setting (the `Settings` fields mirror it).
DEFAULTS: dict[str, Any] = {
    "host": "127.0.0.1",
    "port": 8000,
    "log_level": None,
    "log_format": "text",
    "telemetry": False,
    "max_body_bytes": None,
    "max_sessions": None,
    "mask_errors": True,
    "tool_timeout": None,
    "drain_timeout": 20.0,
    "redis_url": None,
    "allowed_hosts": None,
    "session_id_prefix": None,
}


def read_setting(field: str, environ: Mapping[str, str] | None = None) -> Any:
    """One setting: its variable's value, or the default when it is unset."""
    env = os.environ if environ is None else environ
    name = ENV_PREFIX + field.upper()
    text = env.get(name)
    if text is None:
        return DEFAULTS[field]
    parse = _PARSERS[field]
    try:
        return parse(text)
    except ValueError:
        raise SettingsError(f"{name}={text!r} is not valid: expected {parse.__doc__}") from None
