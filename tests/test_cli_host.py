"""`mcpkit host` and `mcpkit tools` as a user runs them (real processes), against the fake model
APIs: missing credentials and model API failures are one line and exit 1, the chat survives a
failed turn and keeps the conversation as it was before it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from host_support import FakeAPI, anthropic_reply, api_error, api_path, openai_reply
from model_apis import json_error
from support import ROOT, free_port, scaled

WEATHER = ROOT / "examples/weather_server.py"
CLI_SERVER = ROOT / "tests/servers/cli_server.py"
KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "GEMINI_API_KEY")
KEYS += ("GOOGLE_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN")


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": ["-m", "mcpkit", "run", str(WEATHER), "-q"]}
    server["trustNewTools"] = True  # offered on first sight, whatever the pin file holds
    path.write_text(json.dumps({"mcpServers": {"weather": server}}))
    return path


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in KEYS and not k.endswith("_BASE_URL")}
    return {**env, "HOME": env.get("HOME", "/tmp"), **extra}


async def mcpkit(*args: str, env: dict[str, str], stdin: str = "") -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcpkit",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode()), scaled(60))
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def one_error_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def provider_env(provider: str, url: str) -> dict[str, str]:
    if provider == "anthropic":
        return environment(ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=url)
    return environment(OPENAI_API_KEY="test", OPENAI_BASE_URL=url + "/v1")


def text_reply(provider: str, text: str) -> Any:
    make = anthropic_reply if provider == "anthropic" else openai_reply
    return lambda body: make(text, 1)


@pytest.mark.parametrize(
    ("provider", "key"), [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")]
)
async def test_missing_credentials_are_one_line(provider: str, key: str, config: Path) -> None:
    code, out, err = await mcpkit(
        "host", "--config", str(config), "--model", f"{provider}:fake", "hi", env=environment()
    )
    assert code == 1 and out == ""
    line = one_error_line(err)
    assert key in line and "export" in line


@pytest.mark.parametrize(
    ("provider", "status", "words"),
    [("anthropic", 429, "rate limited"), ("openai", 500, "try again"), ("openai", 401, "key")],
)
async def test_model_api_error_is_one_line(
    provider: str, status: int, words: str, config: Path
) -> None:
    async with FakeAPI(api_path(provider), [lambda body: api_error(status)]) as api:
        code, _, err = await mcpkit(
            "host", "-c", str(config), "-m", f"{provider}:fake", "hi",
            env=provider_env(provider, api.url),
        )  # fmt: skip
    assert code == 1
    line = one_error_line(err)
    assert f"{provider} API error {status}" in line and words in line and "slow down" in line


async def test_unreachable_model_api_is_one_line(config: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    code, _, err = await mcpkit(
        "host", "-c", str(config), "-m", "openai:fake", "hi", env=provider_env("openai", url)
    )
    assert code == 1
    assert "cannot reach the openai API" in one_error_line(err)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_chat_survives_a_model_api_error(provider: str, config: Path) -> None:
    replies = [lambda body: api_error(503, "overloaded"), text_reply(provider, "Sunny in Oslo.")]
    async with FakeAPI(api_path(provider), replies) as api:
        code, out, err = await mcpkit(
            "host", "-c", str(config), "-m", f"{provider}:fake",
            env=provider_env(provider, api.url),
            stdin="first question\nsecond question\n",
        )  # fmt: skip
    assert code == 0, err
    assert "Sunny in Oslo." in out
    line = one_error_line(err)
    assert "503" in line and "the conversation is kept" in line
    # The failed turn left nothing behind: the second request holds the second question only.
    second = api.requests[1]["messages"]
    user_texts = [json.dumps(m) for m in second if m["role"] == "user"]
    assert len(user_texts) == 1 and "second question" in user_texts[0]
    assert "you >" in out and "you ():" not in out


async def test_tools_with_an_unknown_server_is_one_line(config: Path) -> None:
    code, out, err = await mcpkit("tools", "-c", str(config), "-s", "wether", env=environment())
    assert code == 1 and out == ""
    line = one_error_line(err)
    assert "no server 'wether'" in line and "did you mean 'weather'?" in line


async def test_host_log_level_shows_server_logs(tmp_path: Path) -> None:
    path = tmp_path / "logs.json"
    server = {"command": sys.executable, "args": ["-m", "mcpkit", "run", str(CLI_SERVER), "-q"]}
    server["trustNewTools"] = True  # offered on first sight, whatever the pin file holds
    path.write_text(json.dumps({"mcpServers": {"cli": server}}))
    replies = [
        lambda body: anthropic_reply([("cli__chatty", {})], 1),
        lambda body: anthropic_reply("Done.", 2),
    ]
    async with FakeAPI(api_path("anthropic"), replies) as api:
        code, out, err = await mcpkit(
            "host", "-c", str(path), "-m", "anthropic:fake", "--log-level", "info", "--allow", "cli__*", "log please",
            env=provider_env("anthropic", api.url),
        )  # fmt: skip
    assert code == 0, err
    assert "cli/cli info: info note" in out and "cli/cli warning: warning sign" in out
    assert "debug detail" not in out


def no_parallel_calls(step: Any) -> Any:
    """A compatible server that refuses `parallel_tool_calls` with a 400, else answers `step`."""
    refusal = {"error": {"message": "parallel_tool_calls is not supported", "type": "invalid"}}
    return lambda body: json_error(400, refusal) if "parallel_tool_calls" in body else step


async def test_host_on_a_local_openai_compatible_server(config: Path) -> None:
    """The documented line: `mcpkit host --model openai:NAME --base-url http://127.0.0.1:PORT/v1`,
    with no key anywhere, against a server that lacks parallel tool calls; the model calls the
    real weather server's tool."""
    step = openai_reply([("weather__forecast", {"city": "Oslo", "days": 1})], 1)
    replies = [no_parallel_calls(step)] * 2 + [lambda body: openai_reply("Oslo: sunny.", 2)]
    async with FakeAPI(api_path("openai"), replies) as api:
        code, out, err = await mcpkit(
            "host", "-c", str(config), "--model", "openai:llama3.1",
            "--base-url", f"{api.url}/v1", "--allow", "weather__*", "Weather in Oslo?",
            env=environment(),
        )  # fmt: skip
    assert code == 0, err
    assert "Oslo: sunny." in out
    assert ["parallel_tool_calls" in body for body in api.requests] == [True, False, False]
    assert {body["model"] for body in api.requests} == {"llama3.1"}
    assert api.seen[0][2]["Authorization"] == "Bearer not-needed"
    result = api.requests[2]["messages"][-1]
    assert result["role"] == "tool" and "Oslo" in result["content"]


async def test_host_takes_its_model_from_the_config(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": ["-m", "mcpkit", "run", str(WEATHER), "-q"]}
    model = {"name": "openai:qwen3", "baseUrl": "${LOCAL_LLM}/v1", "apiKey": "${LLM_KEY}"}
    path.write_text(json.dumps({"mcpServers": {"weather": server}, "model": model}))
    async with FakeAPI(api_path("openai"), [lambda body: openai_reply("Hello.", 1)]) as api:
        code, out, err = await mcpkit(
            "host", "-c", str(path), "hi", env=environment(LOCAL_LLM=api.url, LLM_KEY="sk-local")
        )
    assert code == 0, err
    assert "Hello." in out and api.requests[0]["model"] == "qwen3"
    assert api.seen[0][2]["Authorization"] == "Bearer sk-local"


async def test_base_url_without_a_model_is_one_line(config: Path) -> None:
    code, _, err = await mcpkit(
        "host", "-c", str(config), "--base-url", "http://127.0.0.1:1/v1", "hi", env=environment()
    )
    assert code == 1
    assert "--base-url needs a model name: add --model openai:NAME" in one_error_line(err)
