"""Protocol revisions and the reserved `_meta` keys."""

from __future__ import annotations

LATEST = "2026-07-28"
#: Revisions served on the stateless (per-request `_meta`) wire.
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
#: Revisions of the initialize/session era (2025-11-25 and before).
LEGACY_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LEGACY_LATEST = "2025-11-25"

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
PROGRESS_TOKEN = "progressToken"


def is_modern(version: str) -> bool:
    return version in MODERN_VERSIONS


def is_legacy(version: str) -> bool:
    return version in LEGACY_VERSIONS
