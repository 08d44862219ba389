"""Which model, where, with which key: the config's `"model"` object, the command line's
`--model` / `--base-url`, and the environment, in that order of weight (the command line wins).

    "model": {"name": "openai:qwen3:8b", "baseUrl": "http://127.0.0.1:11434/v1"}
    "model": {"name": "azure:my-gpt-4o", "endpoint": "https://NAME.openai.azure.com",
              "apiVersion": "2024-10-21", "apiKey": "${AZURE_OPENAI_API_KEY}"}
    "model": "gemini:gemini-2.5-flash"

`${VAR}` and `${VAR:-default}` expand as elsewhere in the config. The config's `baseUrl`,
`apiKey`, `endpoint` and `apiVersion` belong to its own provider: a `--model` of another
provider does not inherit them. No I/O here: `missing()` says, in one line, what a choice
lacks before an SDK is even imported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..config import ConfigError, HostConfig, expand

#: The environment variables that hold each provider's key (any one of them will do).
KEYS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "openai": ("OPENAI_API_KEY",),
    "azure": ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}
PROVIDERS = ("anthropic", "openai", "azure", "gemini")
#: What a local OpenAI-compatible server gets as its key when none is set (they ignore it).
PLACEHOLDER_KEY = "not-needed"
_FIELDS = {"name": "spec", "baseUrl": "base_url", "apiKey": "api_key"}
_FIELDS |= {"endpoint": "endpoint", "apiVersion": "api_version"}


@dataclass(frozen=True, slots=True)
class ModelChoice:
    spec: str | None = None  # provider:NAME; None: from the keys in the environment
    base_url: str | None = None
    api_key: str | None = None
    endpoint: str | None = None  # Azure OpenAI's resource endpoint
    api_version: str | None = None  # Azure OpenAI's api-version

    @property
    def provider(self) -> str | None:
        return self.spec.partition(":")[0] if self.spec else None

    @classmethod
    def from_config(cls, config: HostConfig | None) -> ModelChoice:
        """The config's `"model"`: a `provider:NAME` string or an object (module docstring)."""
        raw = config.raw.get("model") if config is not None else None
        if raw is None:
            return cls()
        assert config is not None
        where = f'{config.source or "<config>"}: "model"'
        if isinstance(raw, str):
            raw = {"name": raw}
        if not isinstance(raw, Mapping):
            raise ConfigError(f'{where} must be "provider:NAME" or an object')
        unknown = sorted(set(raw) - set(_FIELDS))
        if unknown:
            raise ConfigError(f"{where} has unknown keys {unknown} ({', '.join(_FIELDS)})")
        raw = expand(dict(raw), os.environ if config.env is None else config.env, where)
        for key, value in raw.items():
            if not isinstance(value, str) or not value:
                raise ConfigError(f'{where}: "{key}" must be a non-empty string')
        choice = cls(**{_FIELDS[k]: v for k, v in raw.items()})
        if choice.spec is not None:
            check_spec(choice.spec, where)
        return choice

    def override(self, spec: str | None, base_url: str | None) -> ModelChoice:
        """This choice under the command line's `--model` and `--base-url`."""
        choice = self
        if spec is not None and self.spec is not None and spec.partition(":")[0] != self.provider:
            choice = ModelChoice(spec)  # another provider: none of the config's settings
        elif spec is not None:
            choice = replace(choice, spec=spec)
        return replace(choice, base_url=base_url) if base_url is not None else choice

    def missing(self, environ: Mapping[str, str] | None = None) -> str | None:
        """One line on what this choice lacks to reach its model API, or None."""
        env = os.environ if environ is None else environ
        provider = self.provider
        if provider not in KEYS or self.api_key:
            return None
        keys = KEYS[provider]
        if provider == "openai" and (self.base_url or env.get("OPENAI_BASE_URL")):
            return None  # a local or compatible server: the placeholder key will do
        if provider == "azure":
            if not (self.endpoint or self.base_url or env.get("AZURE_OPENAI_ENDPOINT")):
                return (
                    f"{self.spec} needs the resource's endpoint: export AZURE_OPENAI_ENDPOINT="
                    'https://NAME.openai.azure.com (or "endpoint" in the config\'s "model")'
                )
            if not (self.api_version or env.get("OPENAI_API_VERSION")):
                return (
                    f"{self.spec} needs an API version: export OPENAI_API_VERSION=2024-10-21 "
                    '(or "apiVersion" in the config\'s "model")'
                )
        if any(env.get(k) for k in keys):
            return None
        if provider == "openai":
            hint = " (or --base-url URL for a local server, which needs none)"
        else:
            hint = ' (or "apiKey" in the config\'s "model")'
        return f"{self.spec} needs an API key: export {keys[0]}=...{hint}"


def check_spec(spec: str, where: str = "--model") -> None:
    """Raise ValueError (one line) unless `spec` is `provider:NAME` with a known provider."""
    provider, colon, name = spec.partition(":")
    if provider not in PROVIDERS:
        raise ConfigError(
            f"{where}: unknown model provider {provider!r}: use "
            + ", ".join(f"{p}:NAME" for p in PROVIDERS)
        )
    if provider == "azure" and not (colon and name):
        raise ConfigError(f"{where}: azure needs the deployment's name: azure:DEPLOYMENT")


def options_of(choice: ModelChoice) -> dict[str, Any]:
    """The keyword arguments `make_model` takes from a choice."""
    return {
        k: v
        for k, v in (
            ("base_url", choice.base_url),
            ("api_key", choice.api_key),
            ("endpoint", choice.endpoint),
            ("api_version", choice.api_version),
        )
        if v is not None
    }
