"""Streamable HTTP request checks that need no I/O: Host/Origin, and the mirrored MCP headers.

Order (FIXTURE 2.2, TR-HDR-*): MCP-Protocol-Version present → `_meta` (-32602) → header equals
`_meta` version → version served (-32022) → Mcp-Method / Mcp-Name → Mcp-Param-* (TR-XMH-15/16).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from ..protocol.errors import HeaderMismatch
from ..protocol.headers import (
    NAME_HEADER_FIELD,
    HeaderParam,
    HeaderValueError,
    decode_header_value,
    header_matches,
    header_param_value,
    is_valid_header_value,
)

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


class HostPolicy:
    """DNS-rebinding defence (TR-HTTP-02/03): allowed `Host` names and `Origin`s."""

    def __init__(
        self, allowed_hosts: Iterable[str] | None, allowed_origins: Iterable[str] | None
    ) -> None:
        hosts = list(allowed_hosts) if allowed_hosts is not None else list(LOOPBACK_HOSTS)
        self.any_host = "*" in hosts
        self.hosts = frozenset(h.lower() for h in hosts if h != "*")
        origins = list(allowed_origins) if allowed_origins is not None else []
        self.any_origin = "*" in origins
        self.origins = frozenset(o.lower().rstrip("/") for o in origins if o != "*")

    def host_ok(self, host: str | None) -> bool:
        if self.any_host:
            return True
        if not host:
            return False
        return _strip_port(host.lower()) in self.hosts

    def origin_ok(self, origin: str) -> bool:
        if self.any_origin:
            return True
        o = origin.lower().rstrip("/")
        if o in self.origins:
            return True
        try:
            parts = urlsplit(o)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False
        return _strip_port(parts.netloc) in self.hosts


def _strip_port(host: str) -> str:
    if host.startswith("["):
        end = host.find("]")
        return host[: end + 1] if end != -1 else host
    name, _, port = host.rpartition(":")
    if name and port.isdigit():
        return name
    return host


def _mismatch(message: str) -> HeaderMismatch:
    return HeaderMismatch(f"Header mismatch: {message}")


def _decoded(name: str, raw: str) -> str:
    if not is_valid_header_value(raw):
        raise _mismatch(f"{name} contains invalid characters")  # TR-HDR-14
    try:
        return decode_header_value(raw.strip())
    except HeaderValueError:
        raise _mismatch(f"{name} is not valid Base64 sentinel encoding") from None


def check_method_headers(
    method: str, params: dict[str, Any] | None, mcp_method: str | None, mcp_name: str | None
) -> None:
    """TR-HDR-08/09/12/13: `Mcp-Method` always, `Mcp-Name` where the method names something."""
    if mcp_method is None:
        raise _mismatch("the Mcp-Method header is required")
    if mcp_method.strip() != method:
        raise _mismatch(f"Mcp-Method {mcp_method!r} does not match the body method {method!r}")
    field = NAME_HEADER_FIELD.get(method)
    if field is None:
        return
    body_value = (params or {}).get(field)
    if mcp_name is None:
        raise _mismatch(f"the Mcp-Name header is required for {method}")
    if _decoded("Mcp-Name", mcp_name) != body_value:
        raise _mismatch(f"Mcp-Name does not match params.{field}")


def check_param_headers(
    header_params: list[HeaderParam], arguments: Any, sent: dict[str, str] | None
) -> None:
    """TR-XMH-14..17: every annotated argument present in the body is mirrored, and equal."""
    args = arguments if isinstance(arguments, dict) else None
    for hp in header_params:
        value = header_param_value(args, hp.path)
        raw = sent.get(hp.header.lower()) if sent else None
        if value is None:
            continue  # TR-XMH-17: not required when absent or null
        if raw is None:
            raise _mismatch(
                f"the Mcp-Param-{hp.header} header is required when '{'.'.join(hp.path)}' is set"
            )
        if not header_matches(_decoded(f"Mcp-Param-{hp.header}", raw), value, hp.type):
            raise _mismatch(
                f"Mcp-Param-{hp.header} does not match the argument '{'.'.join(hp.path)}'"
            )
