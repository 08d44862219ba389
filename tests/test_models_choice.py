"""Which model a host config and command line pick (`host/models/choice.py`): the config's
`"model"`, `--model` / `--base-url` over it, and the one line saying what a choice lacks."""

from __future__ import annotations

import pytest

from mcpkit.host import ConfigError, parse_config
from mcpkit.host.models import make_model
from mcpkit.host.models.choice import ModelChoice, options_of

SERVERS = {"mcpServers": {}}


def choice_of(model: object, **env: str) -> ModelChoice:
    cfg = parse_config({**SERVERS, "model": model}, source="mcp.json", env=env)
    return ModelChoice.from_config(cfg)


def test_the_config_model_object_with_variables() -> None:
    choice = choice_of(
        {"name": "openai:qwen3", "baseUrl": "http://127.0.0.1:${PORT}/v1", "apiKey": "${KEY:-x}"},
        PORT="11434",
    )
    assert choice == ModelChoice("openai:qwen3", "http://127.0.0.1:11434/v1", "x")
    assert options_of(choice) == {"base_url": "http://127.0.0.1:11434/v1", "api_key": "x"}
    assert choice_of("gemini:gemini-2.5-flash") == ModelChoice("gemini:gemini-2.5-flash")


@pytest.mark.parametrize(
    ("model", "words"),
    [
        ({"name": "openai:x", "base_url": "http://h"}, "unknown keys ['base_url']"),
        ({"name": "mistral:large"}, "unknown model provider 'mistral'"),
        ({"name": "azure:"}, "azure:DEPLOYMENT"),
        ({"name": "openai:x", "apiKey": 3}, '"apiKey" must be a non-empty string'),
        (["openai:x"], '"provider:NAME" or an object'),
    ],
)
def test_a_bad_model_section_is_one_line(model: object, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        choice_of(model)
    assert str(caught.value).startswith('mcp.json: "model"') and words in str(caught.value)


def test_the_command_line_wins_and_another_provider_inherits_nothing() -> None:
    config = ModelChoice("openai:qwen3", "http://127.0.0.1:11434/v1", "k")
    assert config.override(None, None) == config
    assert config.override("openai:llama3", None) == ModelChoice(
        "openai:llama3", "http://127.0.0.1:11434/v1", "k"
    )
    assert config.override(None, "http://h:8000/v1").base_url == "http://h:8000/v1"
    assert config.override("anthropic:claude-sonnet-4-5", None) == ModelChoice(
        "anthropic:claude-sonnet-4-5"
    )
    assert ModelChoice().override("openai:x", "http://h/v1") == ModelChoice(
        "openai:x", "http://h/v1"
    )


@pytest.mark.parametrize(
    ("choice", "env", "words"),
    [
        (ModelChoice("openai:x"), {}, "export OPENAI_API_KEY=... (or --base-url URL"),
        (ModelChoice("openai:x", "http://127.0.0.1:8080/v1"), {}, None),
        (ModelChoice("openai:x"), {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, None),
        (ModelChoice("gemini:g"), {}, "export GEMINI_API_KEY=..."),
        (ModelChoice("gemini:g"), {"GOOGLE_API_KEY": "k"}, None),
        (ModelChoice("azure:d"), {}, "export AZURE_OPENAI_ENDPOINT="),
        (ModelChoice("azure:d", endpoint="https://e"), {}, "export OPENAI_API_VERSION="),
        (ModelChoice("azure:d", endpoint="https://e", api_version="v"), {}, "AZURE_OPENAI_API_KEY"),
        (ModelChoice("azure:d", endpoint="https://e", api_version="v", api_key="k"), {}, None),
        (ModelChoice("anthropic:c", api_key="k"), {}, None),
    ],
)
def test_what_a_choice_lacks_is_one_line(
    choice: ModelChoice, env: dict[str, str], words: str | None
) -> None:
    lacking = choice.missing(env)
    assert lacking == words if words is None else (lacking is not None and words in lacking)


def test_an_unknown_provider_names_them_all() -> None:
    with pytest.raises(ValueError) as caught:
        make_model("mistral:large")
    assert "anthropic:NAME, openai:NAME, azure:NAME, gemini:NAME" in str(caught.value)


def test_the_model_sections_in_the_docs_parse() -> None:
    import json
    import re

    from support import ROOT

    page = (ROOT / "docs/models.md").read_text()
    sections = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", page, flags=re.S)]
    assert len(sections) == 3
    env = {"OPENROUTER_API_KEY": "k", "AZURE_OPENAI_API_KEY": "k"}
    for data in sections:
        choice = ModelChoice.from_config(parse_config(data, source="models.md", env=env))
        assert choice.spec is not None and choice.missing({}) is None
