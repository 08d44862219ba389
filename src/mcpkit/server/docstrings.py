"""Descriptions from docstrings: the summary for the tool, each parameter's text for its schema.

Google (`Args:`), NumPy (`Parameters` + dashes) and Sphinx (`:param x:`) styles are parsed by
docstring-parser, so the three give the same definition. A docstring without such sections is
the description as written, and docstring-parser is not even imported.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Doc", "parse_doc"]

#: A line that opens a Google/NumPy section, or a Sphinx field: only then is parsing needed.
_STRUCTURED = re.compile(
    r"^[ \t]*(?:(?:Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|"
    r"Other Parameters|Returns?|Yields?|Raises|Examples?)[ \t]*:?[ \t]*$"
    r"|:(?:param|parameter|arg|argument|key|keyword|type|returns?|rtype|raises?)\b)",
    re.MULTILINE,
)


@dataclass(slots=True)
class Doc:
    """What a handler's docstring says."""

    #: Summary and body, with the parameter sections taken out (None without a docstring).
    description: str | None = None
    #: Parameter name → its documentation, whitespace folded.
    params: dict[str, str] = field(default_factory=dict)


def parse_doc(fn: Callable[..., Any]) -> Doc:
    raw = fn.__doc__
    if not raw or not raw.strip():
        return Doc()
    text = inspect.cleandoc(raw)
    if not _STRUCTURED.search(text):
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
