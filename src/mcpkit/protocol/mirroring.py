"""The server's checks of the HTTP headers that mirror the body (TR-HDR-08..16, TR-XMH-14..17):
present where required, well-formed, and equal to the body once decoded (-32020). No I/O."""

from __future__ import annotations

from typing import Any

from .errors import HeaderMismatch
from .headers import (
    NAME_HEADER_FIELD,
    HeaderParam,
    HeaderValueError,
    decode_header_value,
    header_matches,
    header_param_value,
    is_valid_header_value,
)


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
    if (
        mcp_name == body_value  # the usual case: plain visible ASCII, sent as it is
        and mcp_name.isascii()
        and mcp_name.isprintable()
        and mcp_name.strip() == mcp_name
        and not mcp_name.startswith("=?")
    ):
        return
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
