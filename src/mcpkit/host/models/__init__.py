"""Model adapters: the host's conversation ↔ a model API. `make_model("anthropic:NAME")`.

Providers: `anthropic:NAME`, `openai:NAME` (OpenAI, or any OpenAI-compatible server at a base
URL), `azure:DEPLOYMENT` (Azure OpenAI) and `gemini:NAME`; docs/models.md has the details.
`choice.ModelChoice` says which one a host config and command line pick.
"""

from __future__ import annotations

import os
from typing import Any

from .base import ModelAdapter, ModelAPIError, ModelReplyError
from .choice import PLACEHOLDER_KEY, check_spec

#: The model each provider gets when no name follows its colon.
DEFAULTS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4.1", "gemini": "gemini-2.5-flash"}


def make_model(
    spec: str | None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    endpoint: str | None = None,
    api_version: str | None = None,
) -> ModelAdapter:
    """`anthropic:NAME`, `openai:NAME`, `azure:DEPLOYMENT`, `gemini:NAME`, or None → the first
    provider whose key is in the environment. `base_url` and `api_key` override the SDK's
    environment variables; `openai:` with a base URL and no key anywhere sends a placeholder
    (local servers need none). `endpoint` and `api_version` are Azure OpenAI's."""
    if spec is None:
        spec = _from_environment()
    check_spec(spec)
    provider, _, name = spec.partition(":")
    name = name or DEFAULTS.get(provider, "")
    if provider == "azure":
        from .openai import azure_model

        return azure_model(
            name, endpoint=endpoint, api_version=api_version, api_key=api_key, base_url=base_url
        )
    if provider == "gemini":
        from .gemini import GeminiModel

        return GeminiModel(name, api_key=api_key, base_url=base_url)
    options: dict[str, Any] = {k: v for k, v in (("base_url", base_url), ("api_key", api_key)) if v}
    if provider == "anthropic":
        from .anthropic import AnthropicModel

        return AnthropicModel(name, **options)
    from .openai import OpenAIModel

    keyless = "api_key" not in options and not os.environ.get("OPENAI_API_KEY")
    if keyless and (base_url or os.environ.get("OPENAI_BASE_URL")):
        options["api_key"] = PLACEHOLDER_KEY
    return OpenAIModel(name, **options)


def _from_environment() -> str:
    if os.environ.get("ANTHROPIC_API_KEY"):
        return "anthropic:" + os.environ.get("MCPKIT_ANTHROPIC_MODEL", DEFAULTS["anthropic"])
    if os.environ.get("OPENAI_API_KEY"):
        return "openai:" + os.environ.get("MCPKIT_OPENAI_MODEL", DEFAULTS["openai"])
    if os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY"):
        return "gemini:" + os.environ.get("MCPKIT_GEMINI_MODEL", DEFAULTS["gemini"])
    raise ValueError(
        "no model: pass --model anthropic:NAME, openai:NAME, azure:DEPLOYMENT or gemini:NAME, "
        "or set an API key"
    )


__all__ = ["ModelAPIError", "ModelAdapter", "ModelReplyError", "make_model"]
