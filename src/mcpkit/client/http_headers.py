"""Request headers for Streamable HTTP POSTs (TR-HDR-01..10, TR-XMH-02..11). No I/O."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any

from ..protocol.headers import (
    NAME_HEADER_FIELD,
    HeaderParam,
    InvalidHeaderAnnotation,
    encode_header_value,
    find_header_params,
    header_param_value,
)
from ..protocol.jsonrpc import JSONObject
from ..protocol.versions import LATEST, META_PROTOCOL_VERSION

__all__ = ["ACCEPT", "CALL_HEADERS", "ToolHeaderIndex", "build_request_headers", "call_headers"]

logger = logging.getLogger("mcpkit.client")

ACCEPT = "application/json, text/event-stream"

#: Extra headers for the requests made in this context (`Client.call_tool(headers=...)`).
CALL_HEADERS: ContextVar[Mapping[str, str]] = ContextVar(
    "mcpkit_call_headers",
    default=MappingProxyType({}),  # read-only: never shared mutable state
)
_MCP_HEADERS = ("mcp-protocol-version", "mcp-method", "mcp-name", "mcp-param-", "mcp-session-id")


_NO_HEADERS = contextlib.nullcontext()


def call_headers(headers: Mapping[str, str] | None) -> contextlib.AbstractContextManager[None]:
    """Add `headers` to the requests made inside (none of the MCP ones: TR-HDR-12). Without
    any, a shared no-op (the call path stays as cheap as it was)."""
    if not headers:
        return _NO_HEADERS
    mirrored = [h for h in headers if h.lower().startswith(_MCP_HEADERS)]
    if mirrored:
        raise ValueError(f"headers {mirrored} are set by the transport (TR-HDR-12)")
    return _added(headers)


@contextlib.contextmanager
def _added(headers: Mapping[str, str]) -> Iterator[None]:
    token = CALL_HEADERS.set({**CALL_HEADERS.get(), **headers})
    try:
        yield
    finally:
        CALL_HEADERS.reset(token)


def build_request_headers(
    method: str,
    params: Mapping[str, Any] | None,
    header_params: Sequence[HeaderParam] = (),
) -> dict[str, str]:
    """The MCP headers of one POST: version, method, name and `Mcp-Param-*` mirrors.

    `MCP-Protocol-Version` repeats the body's `_meta` version (TR-HDR-02). Mirrored values
    that are absent or null are omitted (TR-XMH-10); all are encoded (TR-ENC-01).
    """
    params = params or {}
    meta = params.get("_meta")
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, Mapping) else None
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": version if isinstance(version, str) else LATEST,
        "Mcp-Method": method,
    }
    field = NAME_HEADER_FIELD.get(method)
    if field is not None:
        name = params.get(field)
        if isinstance(name, str):
            headers["Mcp-Name"] = encode_header_value(name)
    if header_params:
        arguments = params.get("arguments")
        for param in header_params:
            value = _header_scalar(header_param_value(arguments, param.path))
            if value is not None:
                headers[f"Mcp-Param-{param.header}"] = encode_header_value(value)
    return headers


def _header_scalar(value: Any) -> str | int | bool | None:
    """A value `encode_header_value` accepts; integral floats count as integers."""
    if isinstance(value, str | bool | int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None  # null, absent or not a scalar: no header (the server judges the body)


class ToolHeaderIndex:
    """Tool name → its `x-mcp-header` parameters, learned from `tools/list` pages."""

    __slots__ = ("_params",)

    def __init__(self) -> None:
        self._params: dict[str, tuple[HeaderParam, ...]] = {}

    def accept(self, tools: list[JSONObject]) -> list[JSONObject]:
        """Record each tool's header params; drop tools with invalid ones (TR-XMH-07/08)."""
        kept: list[JSONObject] = []
        for tool in tools:
            name = tool.get("name")
            schema = tool.get("inputSchema")
            try:
                params = find_header_params(schema) if isinstance(schema, Mapping) else []
            except InvalidHeaderAnnotation as exc:
                logger.warning("ignoring tool %r: invalid x-mcp-header: %s", name, exc)
                if isinstance(name, str):
                    self._params.pop(name, None)
                continue
            if isinstance(name, str):
                self._params[name] = tuple(params)
            kept.append(tool)
        return kept

    def params_for(self, tool_name: Any) -> tuple[HeaderParam, ...]:
        """The header params of a tool, or `()` when the tool is unknown or has none."""
        return self._params.get(tool_name, ()) if isinstance(tool_name, str) else ()

    def __len__(self) -> int:
        return len(self._params)
