"""Per-request `_meta` (BASE-45..49): read, check, and hold it for the request's lifetime."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import InvalidParams, UnsupportedProtocolVersion
from .versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    PROGRESS_TOKEN,
)

LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
LOG_LEVEL_RANK: dict[str, int] = {name: i for i, name in enumerate(LOG_LEVELS)}


@dataclass(slots=True, eq=False)
class RequestMeta:
    """What one request says about its client. Never carried over to another request (BASE-24)."""

    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None = None
    log_level: str | None = None
    progress_token: str | int | None = None
    #: The request's whole `_meta`.
    raw: dict[str, Any] = field(default_factory=dict)

    def has_capability(self, name: str) -> bool:
        return isinstance(self.client_capabilities.get(name), dict)


def _bad_meta(message: str) -> InvalidParams:
    # BASE-46: missing/invalid required `_meta` → -32602, HTTP 400.
    return InvalidParams(message, http_status=400)


def read_request_meta(params: dict[str, Any] | None) -> RequestMeta:
    """Read the modern per-request fields; raises InvalidParams (HTTP 400) when one is missing."""
    meta = params.get("_meta") if params is not None else None
    if type(meta) is not dict:
        raise _bad_meta(
            'Invalid params: "_meta" with "io.modelcontextprotocol/protocolVersion" and '
            '"io.modelcontextprotocol/clientCapabilities" is required on every request'
        )
    version = meta.get(META_PROTOCOL_VERSION)
    if type(version) is not str:
        raise _bad_meta(f'Invalid params: "_meta" must carry "{META_PROTOCOL_VERSION}" (a string)')
    caps = meta.get(META_CLIENT_CAPABILITIES)
    if type(caps) is not dict:
        raise _bad_meta(
            f'Invalid params: "_meta" must carry "{META_CLIENT_CAPABILITIES}" (an object; '
            "{} declares none)"
        )
    info = meta.get(META_CLIENT_INFO)
    if info is not None and type(info) is not dict:
        raise _bad_meta(f'Invalid params: "{META_CLIENT_INFO}" must be an object')
    level = meta.get(META_LOG_LEVEL)
    if level is not None and (type(level) is not str or level not in LOG_LEVEL_RANK):
        raise _bad_meta(
            f'Invalid params: "{META_LOG_LEVEL}" must be one of {", ".join(LOG_LEVELS)}'
        )
    token = meta.get(PROGRESS_TOKEN)
    if token is not None and type(token) not in (str, int):
        raise _bad_meta('Invalid params: "progressToken" must be a string or an integer')
    return RequestMeta(version, caps, info, level, token, meta)


def valid_request_meta(meta: dict[str, Any]) -> RequestMeta:
    """The `RequestMeta` of a `_meta` its revision's schema already accepted (no checks but
    the one the schema cannot make: a progress token is a string or a true integer)."""
    token = meta.get(PROGRESS_TOKEN)
    return RequestMeta(
        meta[META_PROTOCOL_VERSION],
        meta[META_CLIENT_CAPABILITIES],
        meta.get(META_CLIENT_INFO),
        meta.get(META_LOG_LEVEL),
        token if type(token) is str or type(token) is int else None,
        meta,
    )


def check_version(
    version: str,
    supported: tuple[str, ...] | list[str],
    advertised: tuple[str, ...] | list[str] | None = None,
) -> None:
    """-32022 unless `version` is served here; `data.supported` lists `advertised` (all eras)."""
    if version not in supported:
        raise UnsupportedProtocolVersion(version, list(advertised or supported))
