"""One rule for a handler's unexpected exception, whatever kind of handler raised it.

A tool, resource, resource template, prompt or completion handler that raises anything but an
`MCPError` (or a `ToolError`, for tools) has a bug: the traceback goes to the server's log
under a short reference id, and the client gets that id and, by default (`mask_errors`),
nothing of the exception's text. A tool answers it as a tool error (`isError: true`, so the
model can read it); the others as a JSON-RPC -32603 with `data.reference` (RES-13).
"""

from __future__ import annotations

import logging
import secrets

from ..protocol.errors import InternalError

log = logging.getLogger("mcpkit.server")


def failure_text(kind: str, name: str, exc: BaseException, masked: bool) -> tuple[str, str]:
    """Log `exc` with its traceback under a new reference id; `(text for the client, id)`.
    `kind` is what failed, capitalised ("Tool", "Resource", "Prompt"...), `name` which one."""
    ref = secrets.token_hex(4)
    log.error("%s %r failed (reference %s)", kind.lower(), name, ref, exc_info=exc)
    if masked:
        text = (
            f"{kind} '{name}' failed with an internal error (reference {ref}). "
            "The details are in the server's log; retrying the same call will probably "
            "fail the same way."
        )
    else:
        text = f"{kind} '{name}' failed: {type(exc).__name__}: {exc} (reference {ref})"
    return text, ref


def handler_failed(kind: str, name: str, exc: BaseException, masked: bool) -> InternalError:
    """The JSON-RPC error (-32603) answering a handler's unexpected exception, logged."""
    text, ref = failure_text(kind, name, exc, masked)
    return InternalError(text, {"reference": ref})
