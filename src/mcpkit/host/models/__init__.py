"""Model adapters: the host's conversation ↔ a model API. `make_model("anthropic:NAME")`."""

from __future__ import annotations

import os

from .base import ModelAdapter


def make_model(spec: str | None) -> ModelAdapter:
    """`anthropic:NAME`, `openai:NAME`, or None → from ANTHROPIC_API_KEY / OPENAI_API_KEY."""
    if spec is None:
        if os.environ.get("ANTHROPIC_API_KEY"):
            spec = "anthropic:" + os.environ.get("MCPKIT_ANTHROPIC_MODEL", "claude-sonnet-4-5")
        elif os.environ.get("OPENAI_API_KEY"):
            spec = "openai:" + os.environ.get("MCPKIT_OPENAI_MODEL", "gpt-4.1")
        else:
            raise ValueError(
                "no model: pass --model anthropic:NAME or openai:NAME, or set an API key"
            )
    provider, _, name = spec.partition(":")
    if provider == "anthropic":
        from .anthropic import AnthropicModel

        return AnthropicModel(name or "claude-sonnet-4-5")
    if provider == "openai":
        from .openai import OpenAIModel

        return OpenAIModel(name or "gpt-4.1")
    raise ValueError(f"unknown model provider {provider!r}: use anthropic:NAME or openai:NAME")


__all__ = ["ModelAdapter", "make_model"]
