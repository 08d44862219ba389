"""Token counts of tool definitions, for `mcpkit lint`.

With tiktoken (`pip install 'mcpkit[lint]'`) and its `o200k_base` encoding (downloaded once by
tiktoken, or found in its cache) the counts are exact for OpenAI's current models and close for
others (Anthropic does not publish its tokenizer). Without them, an estimate of one token per
four characters of JSON, marked as such.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

import orjson

__all__ = ["Counter", "definition_text", "get_counter"]

ENCODING = "o200k_base"
#: How long loading the encoding may take (tiktoken downloads it on first use).
LOAD_SECONDS = 10.0


class Counter:
    def __init__(self, name: str, count: Callable[[str], int], exact: bool) -> None:
        self.name = name
        self.count = count
        self.exact = exact


def estimate(text: str) -> int:
    return math.ceil(len(text) / 4)


def definition_text(tool: dict[str, Any]) -> str:
    """What a host sends a model API for one tool: its name, description and input schema."""
    sent = {k: tool[k] for k in ("name", "description", "inputSchema") if k in tool}
    return orjson.dumps(sent).decode()


def get_counter(kind: str = "auto") -> Counter:
    """`auto`: tiktoken when it loads, else the estimate; `estimate`; `tiktoken` (required)."""
    fallback = Counter("estimate (4 characters a token)", estimate, exact=False)
    if kind == "estimate":
        return fallback
    encoder, why = _load_tiktoken()
    if encoder is not None:
        return Counter(f"{ENCODING} (tiktoken)", lambda text: len(encoder.encode(text)), True)
    if kind == "tiktoken":
        raise RuntimeError(f"cannot count with tiktoken: {why}")
    fallback.name += f"; tiktoken {why}"
    return fallback


def _load_tiktoken() -> tuple[Any, str]:
    try:
        import tiktoken
    except ImportError:
        return None, "is not installed (pip install 'mcpkit[lint]')"
    box: list[Any] = []

    def load() -> None:
        try:
            box.append(tiktoken.get_encoding(ENCODING))
        except Exception as exc:
            box.append(exc)

    # A daemon thread: an unreachable download cannot hold the command (or its exit).
    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(LOAD_SECONDS)
    if not box:
        return None, f"could not load {ENCODING} within {LOAD_SECONDS:g} s"
    if isinstance(box[0], Exception):
        return None, f"could not load {ENCODING} ({type(box[0]).__name__})"
    return box[0], ""
