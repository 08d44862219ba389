"""The `_meta` keys reserved for OpenTelemetry (BASE-53): `traceparent` and `tracestate` follow
W3C Trace Context, `baggage` follows W3C Baggage. Pure checks, no I/O, no OpenTelemetry.

A receiver ignores values that do not follow them (the request is served, without a parent
span); a sender must never put one on the wire, so `trace_meta_problem` names what is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "TRACE_KEYS",
    "trace_meta_problem",
    "valid_baggage",
    "valid_traceparent",
    "valid_tracestate",
]

#: The unprefixed keys (an exception to BASE-41's prefix rule).
TRACE_KEYS = ("traceparent", "tracestate", "baggage")

# version "-" trace-id "-" parent-id "-" trace-flags; later versions may append "-" fields.
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")
_ZERO_TRACE = "0" * 32
_ZERO_PARENT = "0" * 16
_SIMPLE_KEY = r"[a-z][_0-9a-z\-*/]{0,255}"
_TENANT_KEY = r"[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13}"
_TRACESTATE_MEMBER = re.compile(
    rf"(?:{_SIMPLE_KEY}|{_TENANT_KEY})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{{0,255}}[\x21-\x2b\x2d-\x3c\x3e-\x7e]"
)
_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_BAGGAGE_VALUE = r"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*"
_BAGGAGE_MEMBER = re.compile(
    rf"[ \t]*{_TOKEN}[ \t]*=[ \t]*{_BAGGAGE_VALUE}"
    rf"(?:[ \t]*;[ \t]*{_TOKEN}(?:[ \t]*=[ \t]*{_BAGGAGE_VALUE})?)*[ \t]*"
)


def valid_traceparent(value: Any) -> bool:
    """A W3C `traceparent`: version 00 exactly (55 characters), a later version with its
    extra fields; never version ff, an all-zero trace id or an all-zero parent id."""
    if type(value) is not str:
        return False
    m = _TRACEPARENT.fullmatch(value)
    if m is None:
        return False
    version, trace_id, parent_id, _flags, rest = m.groups()
    if version == "ff" or (version == "00" and rest is not None):
        return False
    return trace_id != _ZERO_TRACE and parent_id != _ZERO_PARENT


def valid_tracestate(value: Any) -> bool:
    """A W3C `tracestate`: at most 32 `key=value` members separated by commas (empty
    members are allowed and skipped), each key at most once."""
    if type(value) is not str:
        return False
    keys: set[str] = set()
    for member in value.split(","):
        member = member.strip(" \t")
        if not member:
            continue
        if _TRACESTATE_MEMBER.fullmatch(member) is None:
            return False
        key = member.split("=", 1)[0]
        if key in keys:
            return False
        keys.add(key)
    return len(keys) <= 32


def valid_baggage(value: Any) -> bool:
    """A W3C `baggage` header value: comma-separated `key=value` members with optional
    `;property` parts; values use baggage octets (anything else percent-encoded)."""
    if type(value) is not str or not value.strip(" \t"):
        return False
    return all(_BAGGAGE_MEMBER.fullmatch(member) for member in value.split(","))


_CHECKS = {
    "traceparent": (valid_traceparent, "W3C Trace Context traceparent"),
    "tracestate": (valid_tracestate, "W3C Trace Context tracestate"),
    "baggage": (valid_baggage, "W3C Baggage value"),
}


def trace_meta_problem(meta: Mapping[str, Any]) -> str | None:
    """Why the trace context keys in `meta` may not be sent (BASE-53), or None."""
    for key, (valid, what) in _CHECKS.items():
        if key in meta and not valid(meta[key]):
            return f"_meta[{key!r}] is not a {what} (BASE-53): {meta[key]!r}"
    if "tracestate" in meta and "traceparent" not in meta:
        return "_meta['tracestate'] needs a traceparent beside it (W3C Trace Context)"
    return None
