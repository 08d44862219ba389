"""The `openai:` adapter against OpenAI-compatible servers and Azure OpenAI, through the real
`openai` SDK and a loopback server speaking their wire format: a base URL with no real key,
servers that refuse `parallel_tool_calls` or `tool_choice` (asked again without, once, and
remembered), their own error shapes as one line, and 429s (the SDK's retry honoured, one line
when it gives up)."""

from __future__ import annotations

from typing import Any

import pytest

from host_support import FakeAPI, openai_reply
from mcpkit.cli.errors import describe_model_error
from mcpkit.host.conversation import ToolResult, ToolResults, ToolSpec, UserMessage
from mcpkit.host.models import make_model
from mcpkit.host.models.openai import OpenAIModel
from model_apis import AZURE_PATH, COMPAT_PATH, json_error, plain_error, rate_limited

FORECAST = ToolSpec(
    "weather__forecast",
    "The forecast for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
ASK = [UserMessage("Weather in Oslo?")]


@pytest.fixture(autouse=True)
def no_openai_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_AD_TOKEN", raising=False)


def compat(api: FakeAPI, **options: Any) -> OpenAIModel:
    """`openai:local-model` at the fake's base URL, as `mcpkit host --base-url` makes it."""
    model = make_model("openai:local-model", base_url=api.url + "/v1", **options)
    assert isinstance(model, OpenAIModel)
    api.clients.append(model.client)
    return model


async def test_a_base_url_needs_no_real_key_and_tool_calls_round_trip() -> None:
    replies = [
        lambda body: openai_reply([("weather__forecast", {"city": "Oslo"})], 0),
        lambda body: openai_reply("Sunny.", 1),
    ]
    async with FakeAPI(COMPAT_PATH, replies) as api:
        model = compat(api)
        first = await model.complete("Be brief.", ASK, [FORECAST])
        assert [(c.name, c.arguments) for c in first.tool_calls] == [
            ("weather__forecast", {"city": "Oslo"})
        ]
        results = ToolResults(
            [ToolResult(first.tool_calls[0].id, [{"type": "text", "text": "9C"}])]
        )
        second = await model.complete("Be brief.", [*ASK, first, results], [FORECAST])
    assert second.text == "Sunny." and model.name == "openai:local-model"
    path, _, headers = api.seen[0]
    assert path == COMPAT_PATH and headers["Authorization"] == "Bearer not-needed"
    body = api.requests[0]
    assert body["model"] == "local-model" and body["tools"][0]["function"]["name"] == FORECAST.name
    assert body["parallel_tool_calls"] is True and body["tool_choice"] == "auto"
    assert api.requests[1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": first.tool_calls[0].id,
        "content": "9C",
    }


async def test_an_explicit_key_wins_over_the_placeholder() -> None:
    async with FakeAPI(COMPAT_PATH, [lambda body: openai_reply("hi", 0)]) as api:
        await compat(api, api_key="sk-or-123").complete(None, ASK, [])
    assert api.seen[0][2]["Authorization"] == "Bearer sk-or-123"
    assert "tool_choice" not in api.requests[0]  # no tools: nothing to choose


def refusing(parameter: str, error: Any) -> Any:
    """A server that answers `error` to any request carrying `parameter`."""
    return lambda body: error if parameter in body else openai_reply("done", 0)


@pytest.mark.parametrize(
    ("parameter", "error"),
    [
        (  # OpenAI's own shape, as its reasoning models say it
            "parallel_tool_calls",
            json_error(
                400,
                {
                    "error": {
                        "message": "Unsupported parameter: 'parallel_tool_calls' is not "
                        "supported with this model.",
                        "type": "invalid_request_error",
                        "param": "parallel_tool_calls",
                    }
                },
            ),
        ),
        (  # vLLM started without --enable-auto-tool-choice
            "tool_choice",
            json_error(
                400,
                {
                    "object": "error",
                    "message": '"auto" tool choice requires --enable-auto-tool-choice and '
                    "--tool-call-parser to be set",
                    "type": "BadRequestError",
                    "code": 400,
                },
            ),
        ),
        (  # a strict validator's 422
            "parallel_tool_calls",
            json_error(
                422,
                {"detail": [{"loc": ["body", "parallel_tool_calls"], "msg": "extra fields"}]},
            ),
        ),
    ],
)
async def test_a_refused_parameter_is_dropped_once_and_remembered(
    parameter: str, error: Any
) -> None:
    replies = [refusing(parameter, error)] * 3
    async with FakeAPI(COMPAT_PATH, replies) as api:
        model = compat(api)
        assert (await model.complete(None, ASK, [FORECAST])).text == "done"
        assert (await model.complete(None, ASK, [FORECAST])).text == "done"
    assert [parameter in body for body in api.requests] == [True, False, False]
    assert model.refused == {parameter}
    other = ({"parallel_tool_calls", "tool_choice"} - {parameter}).pop()
    assert all(other in body for body in api.requests)  # the other one still asked for


async def test_another_bad_request_is_not_retried() -> None:
    error = json_error(400, {"error": {"message": "context length exceeded", "type": "x"}})
    async with FakeAPI(COMPAT_PATH, [lambda body: error]) as api:
        model = compat(api)
        with pytest.raises(Exception) as caught:
            await model.complete(None, ASK, [FORECAST])
    assert len(api.requests) == 1 and model.refused == set()
    assert describe_model_error(caught.value) == (
        "openai API error 400 (the model API rejected the request): context length exceeded"
    )


@pytest.mark.parametrize(
    ("status", "reply", "words"),
    [
        (404, json_error(404, {"error": "model 'llama9' not found, try pulling it first"}),
         "model 'llama9' not found, try pulling it first"),  # Ollama
        (404, json_error(404, {"detail": "Not Found"}), "Not Found"),  # a FastAPI server
        (500, plain_error(500, "Internal Server Error\n"), "Internal Server Error"),
        (502, plain_error(502, "<html><body>" + "Bad gateway " * 80 + "</body></html>",
                          "text/html"), "<html><body>Bad gateway"),  # a proxy's page, clipped
    ],
)  # fmt: skip
async def test_other_error_shapes_are_one_clear_line(status: int, reply: Any, words: str) -> None:
    async with FakeAPI(COMPAT_PATH, [lambda body: reply]) as api:
        with pytest.raises(Exception) as caught:
            await compat(api).complete(None, ASK, [])
    line = describe_model_error(caught.value)
    assert line is not None and "\n" not in line and len(line) < 400
    assert line.startswith(f"openai API error {status} (") and words in line


async def test_a_rate_limit_is_retried_by_the_sdk() -> None:
    replies = [lambda body: rate_limited(), lambda body: openai_reply("after the wait", 1)]
    async with FakeAPI(COMPAT_PATH, replies) as api:
        assert (await compat(api).complete(None, ASK, [])).text == "after the wait"
    assert len(api.requests) == 2


async def test_a_rate_limit_that_lasts_is_one_line() -> None:
    async with FakeAPI(COMPAT_PATH, [lambda body: rate_limited()] * 3) as api:
        with pytest.raises(Exception) as caught:
            await compat(api).complete(None, ASK, [])
    assert len(api.requests) == 3  # the first try and the SDK's two retries
    assert describe_model_error(caught.value) == (
        "openai API error 429 (rate limited by the model API: wait and try again): "
        "rate limit reached"
    )


async def test_azure_openai_deployment() -> None:
    replies = [
        lambda body: openai_reply([("weather__forecast", {"city": "Oslo"})], 0),
        lambda body: rate_limited(),
        lambda body: openai_reply("Sunny.", 1),
    ]
    async with FakeAPI(AZURE_PATH, replies) as api:
        model = make_model(
            "azure:gpt-4o-prod", endpoint=api.url, api_version="2024-10-21", api_key="azure-key"
        )
        assert isinstance(model, OpenAIModel)
        api.clients.append(model.client)
        first = await model.complete(None, ASK, [FORECAST])
        results = ToolResults(
            [ToolResult(first.tool_calls[0].id, [{"type": "text", "text": "9C"}])]
        )
        second = await model.complete(None, [*ASK, first, results], [FORECAST])
    assert first.tool_calls[0].arguments == {"city": "Oslo"} and second.text == "Sunny."
    assert model.name == "azure:gpt-4o-prod"
    path, query, headers = api.seen[0]
    assert path == "/openai/deployments/gpt-4o-prod/chat/completions"
    assert query == {"api-version": "2024-10-21"} and headers["api-key"] == "azure-key"
    assert len(api.requests) == 3  # the 429 was retried


async def test_azure_from_the_sdk_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    async with FakeAPI(AZURE_PATH, [lambda body: openai_reply("hi", 0)]) as api:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", api.url)
        monkeypatch.setenv("OPENAI_API_VERSION", "2025-01-01-preview")
        monkeypatch.setenv("AZURE_OPENAI_AD_TOKEN", "entra-token")
        model = make_model("azure:dep")
        api.clients.append(model.client)
        await model.complete(None, ASK, [])
    path, query, headers = api.seen[0]
    assert path.startswith("/openai/deployments/dep/") and headers["Authorization"] == (
        "Bearer entra-token"
    )
    assert query["api-version"] == "2025-01-01-preview"


async def test_tool_calls_without_ids_get_their_own() -> None:
    reply = openai_reply([("weather__forecast", {"city": "Oslo"}), ("weather__forecast", {})], 0)
    for call in reply["choices"][0]["message"]["tool_calls"]:
        del call["id"]
    async with FakeAPI(COMPAT_PATH, [lambda body: reply]) as api:
        message = await compat(api).complete(None, ASK, [FORECAST])
    ids = [c.id for c in message.tool_calls]
    assert len(set(ids)) == 2 and all(ids)


async def test_no_choices_is_one_line() -> None:
    empty = {**openai_reply("x", 0), "choices": []}
    async with FakeAPI(COMPAT_PATH, [lambda body: empty]) as api:
        with pytest.raises(Exception) as caught:
            await compat(api).complete(None, ASK, [])
    assert describe_model_error(caught.value) == (
        "the model API answered with no choices: try again"
    )
