"""MCP client: `Client` talks to one server of either era over stdio, Streamable HTTP or in
process. `ClientSession` is the bare modern-era request layer underneath."""

from __future__ import annotations

from .client import Client
from .errors import (
    ClientError,
    ConnectFailed,
    ConnectionClosed,
    InvalidResponse,
    RequestTimeout,
    StreamBroken,
    TaskCancelled,
    TransportError,
)
from .inputs import Elicitation, NoHandler
from .session import ClientSession, make_transport
from .target import HttpTarget, StdioTarget, parse_target
from .transport import NotificationHandler, Transport
from .types import (
    CallResult,
    Completion,
    Prompt,
    PromptResult,
    ReadResult,
    Resource,
    ResourceTemplate,
    ServerInfo,
    Tool,
)

__all__ = [
    "CallResult",
    "Client",
    "ClientError",
    "ClientSession",
    "Completion",
    "ConnectFailed",
    "ConnectionClosed",
    "Elicitation",
    "HttpTarget",
    "InvalidResponse",
    "NoHandler",
    "NotificationHandler",
    "Prompt",
    "PromptResult",
    "ReadResult",
    "RequestTimeout",
    "Resource",
    "ResourceTemplate",
    "ServerInfo",
    "StdioTarget",
    "StreamBroken",
    "TaskCancelled",
    "Tool",
    "Transport",
    "TransportError",
    "make_transport",
    "parse_target",
]
