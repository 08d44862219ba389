"""Which era a server speaks (VER-10/11, TR-HBC-02/03, TR-STDIO-15..17), and what it said."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..protocol.errors import (
    HEADER_MISMATCH,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    MCPError,
)
from ..protocol.jsonrpc import JSONObject, Notification
from ..protocol.versions import LEGACY_VERSIONS, MODERN_VERSIONS
from .connect import Era
from .errors import ClientError, RequestTimeout, TransportError
from .session import ClientSession
from .types import ServerInfo

if TYPE_CHECKING:
    from .inputs import InputHandlers
    from .legacy import LegacyClientSession
    from .transport import Transport

#: Errors only a 2026-07-28 server sends: recognising one means "modern" (VER-10, TR-HBC-02).
_MODERN_CODES = frozenset(
    {UNSUPPORTED_PROTOCOL_VERSION, MISSING_REQUIRED_CLIENT_CAPABILITY, HEADER_MISMATCH}
)
#: Detected eras, per HTTP endpoint or stdio command (VER-11).
ERA_CACHE: dict[str, Era] = {}


async def probe_modern(
    session: ClientSession, *, strict: bool, timeout: float | None
) -> ServerInfo | None:
    """`server/discover` first; a recognised modern error still means modern (VER-10).

    `strict` (the era is known or required): every failure is raised. `timeout` bounds each
    attempt in either case: a server that accepts and never answers fails the connect."""
    for attempt in range(2):
        try:
            raw = await session.request("server/discover", timeout=timeout)
        except MCPError as exc:
            if exc.code == UNSUPPORTED_PROTOCOL_VERSION and isinstance(exc.data, dict):
                usable = [v for v in exc.data.get("supported") or [] if v in MODERN_VERSIONS]
                if usable and attempt == 0:
                    session.protocol_version = usable[0]  # VER-03: retry with theirs
                    continue
                if not usable and any(
                    v in LEGACY_VERSIONS for v in exc.data.get("supported") or []
                ):
                    return None
            if exc.code in _MODERN_CODES or strict:
                raise
            return None  # -32601, -32602, anything else: a legacy server (TR-STDIO-17)
        except RequestTimeout:
            if strict:
                raise
            return None
        except TransportError as exc:
            if strict or exc.status is None or exc.status in (401, 403):
                raise  # 401/403: authorization is missing, not a legacy server
            return None  # HTTP 4xx without a modern error body: legacy (TR-HBC-03)
        return server_info(raw, session.protocol_version)
    raise ClientError("the server rejected every protocol version this client speaks")


@dataclass(frozen=True, slots=True)
class LegacyStart:
    """What a 2025-11-25 session needs besides the modern session, should the server be legacy."""

    transport: Transport
    handlers: InputHandlers
    on_notification: Callable[[Notification], Any]
    extensions: JSONObject

    def session(self, session: ClientSession) -> LegacyClientSession:
        from .legacy import LegacyClientSession

        return LegacyClientSession(
            self.transport,
            self.handlers,
            session,
            on_notification=self.on_notification,
            extensions=self.extensions,
        )


async def connect_era(
    key: str | None,
    requested: str,
    session: ClientSession,
    legacy: LegacyStart,
    timeout: float | None,
    probe_timeout: float,
) -> tuple[ServerInfo, LegacyClientSession | None]:
    """`handshake` in the era asked for, else the one cached for this target (VER-11), else
    "auto". The detected era is cached under `key` (None: not cached); a cached guess that
    fails is forgotten, so that the next connect probes again."""
    cached = ERA_CACHE.get(key) if requested == "auto" and key is not None else None
    try:
        info, opened = await handshake(cached or requested, session, legacy, timeout, probe_timeout)
    except BaseException:
        if cached is not None and key is not None:
            ERA_CACHE.pop(key, None)
        raise
    if key is not None:
        ERA_CACHE[key] = "legacy" if opened is not None else "modern"
    return info, opened


async def handshake(
    era: str,
    session: ClientSession,
    legacy: LegacyStart,
    timeout: float | None,
    probe_timeout: float,
) -> tuple[ServerInfo, LegacyClientSession | None]:
    """Connect in `era` ("auto", "modern", "legacy"): the server's info, and the legacy session
    when it speaks 2025-11-25. Every step has a deadline: the probe `probe_timeout` when the era
    is unknown (TR-STDIO-16), else `timeout`; `initialize` `timeout`."""
    if era != "legacy":
        strict = era == "modern"
        info = await probe_modern(
            session, strict=strict, timeout=timeout if strict else probe_timeout
        )
        if info is not None:
            return info, None
    started = legacy.session(session)
    try:
        return await started.initialize(timeout), started
    except MCPError as exc:
        if era != "auto" or not refused_as_modern(exc):
            raise
        started.detach()  # a slow modern-only server: the probe timed out, yet it is modern
        modern = await probe_modern(session, strict=True, timeout=timeout)
        if modern is None:
            raise
        return modern, None


def refused_as_modern(exc: MCPError) -> bool:
    """`initialize` refused with -32022 naming modern versions (VER-12): a modern-only server
    that was too slow to answer the probe in time. Connect with `server/discover` after all."""
    if exc.code != UNSUPPORTED_PROTOCOL_VERSION or not isinstance(exc.data, dict):
        return False
    supported = exc.data.get("supported")
    return isinstance(supported, list) and any(v in MODERN_VERSIONS for v in supported)


def server_info(raw: JSONObject, version: str) -> ServerInfo:
    info = (
        (raw.get("_meta") or {}).get("io.modelcontextprotocol/serverInfo")
        or raw.get("serverInfo")
        or {}
    )
    versions = raw.get("supportedVersions") or []
    return ServerInfo(
        era="modern",
        protocol_version=version,
        capabilities=raw.get("capabilities") or {},
        name=info.get("name"),
        version=info.get("version"),
        instructions=raw.get("instructions"),
        supported_versions=tuple(v for v in versions if isinstance(v, str)),
        raw=raw,
    )
