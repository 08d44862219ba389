"""Configuration files as MCP clients write them: JSON, or JSONC where the client allows it
(VS Code's `settings.json` and `mcp.json` take `//` and `/* */` comments and trailing commas).

Strict JSON goes through the standard parser; anything else through `json5`, a maintained
superset of JSONC, so a commented file reads the same as its plain twin.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["JSONCError", "is_strict_json", "loads"]


class JSONCError(ValueError):
    """Neither JSON nor JSONC; `line` is 1-based (0 when the parser did not say)."""

    def __init__(self, reason: str, line: int = 0) -> None:
        super().__init__(f"line {line}: {reason}" if line else reason)
        self.reason = reason
        self.line = line


def is_strict_json(text: str) -> bool:
    """Whether `text` parses as plain JSON (rewriting it then loses nothing)."""
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def loads(text: str) -> Any:
    """The value of a JSON or JSONC document (an empty or blank one is `{}`)."""
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except json.JSONDecodeError as strict:
        first = strict
    import json5

    try:
        return json5.loads(text)
    except ValueError as exc:
        # json5 says `<string>:LINE what`; the strict parser's account is the fallback.
        found = re.match(r"<string>:(\d+) (.*)", str(exc))
        if found is None:
            raise JSONCError(first.msg, first.lineno) from None
        raise JSONCError(found.group(2), int(found.group(1))) from None
