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


#: The SDKs whose errors `describe_model_error` reads, by top-level package.
_SDKS = {"anthropic": "anthropic", "openai": "openai", "google": "gemini"}  # google.genai
#: The longest error detail a line carries (a proxy's HTML page must not fill the terminal).
_DETAIL_MAX = 300


def describe_model_error(exc: BaseException) -> str | None:
    """A line for an `anthropic`, `openai` or `google-genai` SDK error (connection, status,
    timeout) or an unusable reply, else None."""
    from ..host.models.base import ModelAPIError

    if isinstance(exc, ModelAPIError):
        return one_line(str(exc))
    module = type(exc).__module__
    package = _SDKS.get("google" if module.startswith("google.genai") else module.split(".")[0])
    if package is None:
        return None
    status = getattr(exc, "status_code", None)
    if package == "gemini":
        status = getattr(exc, "code", None)
    name = type(exc).__name__
    detail = _api_message(exc)
    if isinstance(status, int):
        hint = _STATUS_HINTS.get(status) or (
            "the model API failed: try again" if status >= 500 else "the model API said no"
        )
        return one_line(f"{package} API error {status} ({hint}): {detail}")
    if "Timeout" in name:
        return f"{package} API timed out: try again (or check the network)"
    if "Connection" in name or isinstance(exc, OSError):
        url = getattr(getattr(exc, "request", None), "url", None)
        where = f" at {url}" if url is not None else ""
        return one_line(f"cannot reach the {package} API{where}: {detail}; check the network")
    return one_line(f"{package} error: {detail}")


def _api_message(exc: BaseException) -> str:
    """The error's own words, whatever shape the server gave them: OpenAI's
    `{"error": {"message"}}`, Ollama's `{"error": "..."}`, vLLM's `{"message"}`, a framework's
    `{"detail"}`, Gemini's `message`, or a plain-text (even HTML) body, clipped."""
    body: Any = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return _clip(error["message"])
        for value in (error, body.get("message"), body.get("detail")):
            if isinstance(value, str) and value.strip():
                return _clip(value)
        detail = body.get("detail")
        if isinstance(detail, list) and detail and isinstance(detail[0], dict):
            return _clip(str(detail[0].get("msg", detail[0])))
    if isinstance(body, str) and body.strip():
        return _clip(body)
    message = getattr(exc, "message", None)  # google-genai's APIError
    if isinstance(message, str) and message.strip():
        return _clip(message)
    return _clip(str(exc)) or type(exc).__name__


def _clip(text: str) -> str:
    text = one_line(text)
    return text if len(text) <= _DETAIL_MAX else text[: _DETAIL_MAX - 1] + "…"


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
