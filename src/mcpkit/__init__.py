"""mcpkit: a complete, fast Model Context Protocol implementation (server, client, host).

`import mcpkit` is cheap: names load on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .protocol.content import (
        Annotations,
        AudioContent,
        BlobResourceContents,
        CallToolResult,
        EmbeddedResource,
        Icon,
        ImageContent,
        Implementation,
        PromptMessage,
        ResourceLink,
        TextContent,
        TextResourceContents,
        ToolAnnotations,
    )
    from .protocol.errors import (
        HeaderMismatch,
        InternalError,
        InvalidParams,
        InvalidRequest,
        MCPError,
        MethodNotFound,
        MissingRequiredClientCapability,
        ParseError,
        ServerBusy,
        UnsupportedProtocolVersion,
    )
    from .server import CacheHint, Context, Server, TaskStore, Tool, ToolError

_EXPORTS = {
    # server
    "Server": "mcpkit.server.server",
    "Context": "mcpkit.server.context",
    "Tool": "mcpkit.server.tools",
    "ToolError": "mcpkit.server.tools",
    "CacheHint": "mcpkit.server.caching",
    "TaskStore": "mcpkit.server.tasks.store",
    # wire objects
    "Annotations": "mcpkit.protocol.content",
    "AudioContent": "mcpkit.protocol.content",
    "BlobResourceContents": "mcpkit.protocol.content",
    "CallToolResult": "mcpkit.protocol.content",
    "EmbeddedResource": "mcpkit.protocol.content",
    "Icon": "mcpkit.protocol.content",
    "ImageContent": "mcpkit.protocol.content",
    "Implementation": "mcpkit.protocol.content",
    "PromptMessage": "mcpkit.protocol.content",
    "ResourceLink": "mcpkit.protocol.content",
    "TextContent": "mcpkit.protocol.content",
    "TextResourceContents": "mcpkit.protocol.content",
    "ToolAnnotations": "mcpkit.protocol.content",
    # errors
    "MCPError": "mcpkit.protocol.errors",
    "ParseError": "mcpkit.protocol.errors",
    "InvalidRequest": "mcpkit.protocol.errors",
    "MethodNotFound": "mcpkit.protocol.errors",
    "InvalidParams": "mcpkit.protocol.errors",
    "InternalError": "mcpkit.protocol.errors",
    "HeaderMismatch": "mcpkit.protocol.errors",
    "MissingRequiredClientCapability": "mcpkit.protocol.errors",
    "UnsupportedProtocolVersion": "mcpkit.protocol.errors",
    "ServerBusy": "mcpkit.protocol.errors",
}

__all__ = [
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "CacheHint",
    "CallToolResult",
    "Context",
    "EmbeddedResource",
    "HeaderMismatch",
    "Icon",
    "ImageContent",
    "Implementation",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "MCPError",
    "MethodNotFound",
    "MissingRequiredClientCapability",
    "ParseError",
    "PromptMessage",
    "ResourceLink",
    "Server",
    "ServerBusy",
    "TaskStore",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "ToolAnnotations",
    "ToolError",
    "UnsupportedProtocolVersion",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
