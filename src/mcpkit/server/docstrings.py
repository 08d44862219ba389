"""Descriptions from docstrings: the summary for the tool, each parameter's text for its schema.

Google (`Args:`), NumPy (`Parameters` + dashes) and Sphinx (`:param x:`) styles are parsed by
docstring-parser, so the three give the same definition. A docstring without such sections is
the description as written, and docstring-parser is not even imported.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

__all__ = ["Doc", "parse_doc"]

#: A line that opens a Google/NumPy section, or a Sphinx field: only then is parsing needed.
_STRUCTURED = (
    r"^[ \t]*(?:(?:Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|"
    r"Other Parameters|Returns?|Yields?|Raises|Examples?)[ \t]*:?[ \t]*$"
    r"|:(?:param|parameter|arg|argument|key|keyword|type|returns?|rtype|raises?)\b)"
)


class Doc:
    """What a handler's docstring says. (A plain class: a dataclass costs ~1 ms at import.)"""

    __slots__ = ("description", "params")

    def __init__(self, description: str | None = None, params: dict[str, str] | None = None):
        #: Summary and body, with the parameter sections taken out (None without a docstring).
        self.description = description
        #: Parameter name → its documentation, whitespace folded.
        self.params: dict[str, str] = params if params is not None else {}

    def __repr__(self) -> str:
        return f"Doc({self.description!r}, {self.params!r})"


def parse_doc(fn: Callable[..., Any]) -> Doc:
    raw = fn.__doc__
    if not raw or not raw.strip():
        return Doc()
    text = inspect.cleandoc(raw)
    if not re.search(_STRUCTURED, text, re.MULTILINE):  # compiled on first use, then cached
        return Doc(text)
    import docstring_parser

    parsed = docstring_parser.parse(text)
    params = {
        p.arg_name: _fold(p.description)
        for p in parsed.params
        if p.description and p.description.strip()
    }
    parts = [
        part.strip()
        for part in (parsed.short_description, parsed.long_description)
        if part and part.strip()
    ]
    returns = parsed.returns
    if returns is not None and returns.description and returns.description.strip():
        parts.append(f"Returns: {_fold(returns.description)}")
    return Doc("\n\n".join(parts) or None, params)


def _fold(text: str | None) -> str:
    return " ".join((text or "").split())
