"""`on_call`: the application's say in each tool call, at call time.

    def per_user(call: CallInfo) -> CallExtras:
        return CallExtras(meta={"com.example/user": session.user_id},
                          headers={"X-Tenant": session.tenant},
                          arguments={"customer_id": session.customer_id})

    Host(config, model=..., on_call=per_user)

The hook may be sync or async and return None to add nothing. It adds `_meta` keys, HTTP
headers (Streamable HTTP servers only; stdio has none) and values of the server's `hostOwned`
arguments. It cannot take over what the protocol owns: `_meta` keys under an MCP prefix
(`io.modelcontextprotocol/…`, `…mcp/…`), `progressToken` (BASE-40..44), trace context
(`traceparent`, `tracestate`, `baggage`: the telemetry's, BASE-53), malformed keys
(BASE-41/44), or the headers the transport sets and mirrors (`MCP-Protocol-Version`,
`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`: TR-HDR-01..12, plus the connection's own). Such a call
is refused before anything reaches the server.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..protocol.tracecontext import TRACE_KEYS

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_PREFIX = re.compile(rf"^{_LABEL}(?:\.{_LABEL})*/$")  # BASE-41
_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")  # BASE-44
_RESERVED_NAMES = frozenset({"progressToken"})
#: Headers the transport owns (compared case-insensitively, TR-HDR-11).
TRANSPORT_HEADERS = frozenset(
    {
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "mcp-session-id",
        "last-event-id",
        "authorization",
        "dpop",
        "content-type",
        "content-length",
        "accept",
        "host",
    }
)


@dataclass(frozen=True, slots=True)
class CallInfo:
    """The call about to be made (arguments as the model gave them, host-owned ones absent)."""

    server: str
    tool: str
    alias: str
    arguments: Mapping[str, Any]


@dataclass(slots=True)
class CallExtras:
    meta: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    arguments: dict[str, Any] = field(default_factory=dict)


OnCall = Callable[[CallInfo], CallExtras | Awaitable[CallExtras | None] | None]


class HookRefused(ValueError):
    """The hook tried to set something it may not; the message says what."""


def meta_key_problem(key: str) -> str | None:
    """Why `key` may not be set by an application in `_meta`, or None."""
    prefix, slash, name = key.rpartition("/")
    if slash and not _PREFIX.match(prefix + "/"):
        return f"_meta key {key!r} has a malformed prefix (BASE-41)"
    if slash:
        labels = prefix.split(".")
        if len(labels) > 1 and labels[1] in ("modelcontextprotocol", "mcp"):
            return f"_meta key {key!r} is reserved for MCP (BASE-43)"
    if name and not _NAME.match(name):
        return f"_meta key {key!r} has a malformed name (BASE-44)"
    if not slash and key in _RESERVED_NAMES:
        return f"_meta key {key!r} is the protocol's (BASE-40)"
    if not slash and key in TRACE_KEYS:
        return (
            f"_meta key {key!r} is trace context, set by the host's telemetry from the "
            "current OpenTelemetry context (BASE-53)"
        )
    return None


def header_problem(name: str, value: Any) -> str | None:
    lower = name.lower()
    if lower in TRANSPORT_HEADERS or lower.startswith("mcp-param-"):
        return f"header {name!r} is set by the transport (TR-HDR-12)"
    if not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name):
        return f"header name {name!r} is not a valid token"
    if not isinstance(value, str) or any(c in value for c in "\r\n\0"):
        return f"header {name!r} needs a one-line string value"
    return None


async def run_hook(hook: OnCall, call: CallInfo, host_owned: Mapping[str, Any]) -> CallExtras:
    """Call the hook and check what it returned; raises HookRefused."""
    extras = hook(call)
    if inspect.isawaitable(extras):
        extras = await extras
    if extras is None:
        return CallExtras()
    if not isinstance(extras, CallExtras):
        raise HookRefused(f"on_call returned {type(extras).__name__}, not CallExtras or None")
    problems = [p for k in extras.meta if (p := meta_key_problem(k))]
    problems += [p for k, v in extras.headers.items() if (p := header_problem(k, v))]
    problems += [
        f"argument {k!r} is not host-owned for server {call.server!r} (config hostOwned)"
        for k in extras.arguments
        if k not in host_owned
    ]
    if problems:
        raise HookRefused("; ".join(problems))
    return extras
