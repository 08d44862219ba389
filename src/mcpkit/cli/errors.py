"""Errors as people read them: one line on stderr (what failed, why, what to do), exit status 1.

`CLIError` is what commands raise for a failure they can explain; `describe()` turns any other
exception the CLI meets (MCP errors, transport errors, model API errors, usage errors) into such
a line. Nothing here imports more than the standard library and click.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from typing import Any

__all__ = [
    "CLIError",
    "describe",
    "describe_model_error",
    "did_you_mean",
    "one_line",
    "show_tracebacks",
]


class CLIError(Exception):
    """A failure the CLI explains in one line; exit status 1."""

    def __init__(self, message: str, *, exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


def one_line(text: str) -> str:
    """Every line of `text`, stripped and joined: nothing cut, nothing wrapped."""
    parts = [line.strip() for line in text.strip().splitlines()]
    return " ".join(part for part in parts if part) or "unknown error"


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`"; did you mean 'forecast'?"` for a close match, else `""`."""
    close = difflib.get_close_matches(name, list(choices), n=2, cutoff=0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?"


def show_tracebacks() -> bool:
    """`MCPKIT_DEBUG=1` lets unexpected exceptions through with their traceback."""
    return os.environ.get("MCPKIT_DEBUG", "") not in ("", "0")


_STATUS_HINTS = {
    400: "the model API rejected the request",
    401: "the model API rejected the API key: check it",
    403: "the API key may not use this model",
    404: "no such model: check the name after the colon",
    408: "the model API timed out: try again",
    413: "the conversation is too large for the model API",
    429: "rate limited by the model API: wait and try again",
    529: "the model API is overloaded: try again shortly",
}


def describe_model_error(exc: BaseException) -> str | None:
    """A line for an `anthropic` or `openai` SDK error (connection, status, timeout), else None."""
    package = type(exc).__module__.partition(".")[0]
    if package not in ("anthropic", "openai"):
        return None
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__
    detail = _api_message(exc)
    if isinstance(status, int):
        hint = _STATUS_HINTS.get(status) or (
            "the model API failed: try again" if status >= 500 else "the model API said no"
        )
        return one_line(f"{package} API error {status} ({hint}): {detail}")
    if "Timeout" in name:
        return f"{package} API timed out: try again (or check the network)"
    if "Connection" in name:
        url = getattr(getattr(exc, "request", None), "url", None)
        where = f" at {url}" if url is not None else ""
        return one_line(f"cannot reach the {package} API{where}: {detail}; check the network")
    return one_line(f"{package} error: {detail}")


def _api_message(exc: BaseException) -> str:
    body: Any = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
    return str(exc) or type(exc).__name__


def describe(exc: BaseException) -> str:
    """The one line for any exception a command let through."""
    from ..client.errors import ClientError
    from ..protocol.errors import MCPError

    if isinstance(exc, CLIError):
        return one_line(exc.message)
    if isinstance(exc, MCPError):
        return one_line(f"{exc.message} (error {exc.code})")
    if isinstance(exc, ClientError):
        return one_line(str(exc) or type(exc).__name__)
    model = describe_model_error(exc)
    if model is not None:
        return model
    if isinstance(exc, OSError) and exc.strerror:
        where = f" ({exc.filename})" if exc.filename else ""
        return one_line(f"{exc.strerror}{where}")
    return one_line(f"unexpected {type(exc).__name__}: {exc} (MCPKIT_DEBUG=1 shows the traceback)")
