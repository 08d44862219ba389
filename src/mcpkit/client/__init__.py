"""MCP client: `ClientSession` over Streamable HTTP or stdio (modern era, 2026-07-28)."""

from __future__ import annotations

from .errors import (
    ClientError,
    ConnectionClosed,
    InputRequired,
    InvalidResponse,
    RequestTimeout,
    TransportError,
)
from .session import ClientSession, make_transport
from .target import HttpTarget, StdioTarget, parse_target
from .transport import NotificationHandler, Transport

__all__ = [
    "ClientError",
    "ClientSession",
    "ConnectionClosed",
    "HttpTarget",
    "InputRequired",
    "InvalidResponse",
    "NotificationHandler",
    "RequestTimeout",
    "StdioTarget",
    "Transport",
    "TransportError",
    "make_transport",
    "parse_target",
]
