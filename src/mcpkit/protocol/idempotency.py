"""The idempotency extension (`dev.mcpkit/idempotency`): names and checks, no I/O.

A server that supports it lists the extension in `capabilities.extensions` with its settings
(VER-06/07), e.g. `{"dev.mcpkit/idempotency": {"ttlSeconds": 86400}}`. A client may then put a
key in the `_meta` of a `tools/call` (a string of 1 to 255 characters, unique per intended
call, e.g. a UUID): `"_meta": {"dev.mcpkit/idempotencyKey": "9b1d..."}`. For the same caller,
tool and key, the server runs the tool once and answers every repeat within `ttlSeconds` with
the first result; a repeat that is still running waits for it; a repeat with other arguments
is refused with -32602. `input_required` answers are never kept (the MRTR retry carries the
same key and runs the tool). Replayed results carry `_meta["dev.mcpkit/idempotentReplay"]: true`.
A call that ended without an outcome (cancelled, stopped, its server gone) answers repeats with
error -31100, `data.idempotencyKey` naming the key ("outcome unknown"): it is never run again.

The prefix `dev.mcpkit/` follows the `_meta` key rules (BASE-41..44): our own reverse-DNS
labels, outside the reserved `modelcontextprotocol`/`mcp` second labels.
"""

from __future__ import annotations

import uuid
from typing import Any, Final

IDEMPOTENCY_EXTENSION: Final = "dev.mcpkit/idempotency"
IDEMPOTENCY_KEY: Final = "dev.mcpkit/idempotencyKey"
IDEMPOTENT_REPLAY: Final = "dev.mcpkit/idempotentReplay"
MAX_KEY_LENGTH: Final = 255


def advertised(capabilities: dict[str, Any]) -> dict[str, Any] | None:
    """The extension's settings when a server's capabilities list it, else None."""
    extensions = capabilities.get("extensions")
    settings = extensions.get(IDEMPOTENCY_EXTENSION) if isinstance(extensions, dict) else None
    return settings if isinstance(settings, dict) else None


def key_of(params: dict[str, Any]) -> object:
    """The key a request carries (None without one; anything else is checked by the server)."""
    meta = params.get("_meta")
    return meta.get(IDEMPOTENCY_KEY) if isinstance(meta, dict) else None


def valid_key(key: object) -> bool:
    return type(key) is str and 0 < len(key) <= MAX_KEY_LENGTH


def choose_key(value: str | bool | None) -> str | None:
    """What a caller asked for: a key as given, a fresh one (True), or none (None, False)."""
    if value is True:
        return uuid.uuid4().hex
    if value is None or value is False:
        return None
    if not valid_key(value):
        raise ValueError(f"an idempotency key is a string of 1 to {MAX_KEY_LENGTH} characters")
    return value
