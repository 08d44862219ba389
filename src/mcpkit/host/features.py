"""What a UI adds to every server connection (`ClientFeatures`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ClientFeatures:
    """What a UI adds to every server connection: extensions to declare (VER-07, e.g. MCP
    Apps), URL-mode elicitation, and a trace of the JSON-RPC messages (server, direction,
    message) for an inspector."""

    extensions: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    url_elicitation: bool = False
    trace: Callable[[str, str, dict[str, Any]], None] | None = None
