"""The `gemini:` adapter through Google's real `google-genai` SDK against a loopback server that
speaks `generateContent`: function calls and their responses on the wire (with and without
ids, a thought signature sent back), converted schemas, an error and 429s as one line."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from host_support import FakeAPI
from mcpkit.cli.errors import describe_model_error
from mcpkit.host.conversation import ToolResult, ToolResults, ToolSpec, UserMessage
from mcpkit.host.models import make_model
from mcpkit.host.models.gemini import GeminiModel
from model_apis import GEMINI_PATH, SIGNATURE, GeminiClosing, gemini_error, gemini_reply
from support import free_port

FORECAST = ToolSpec(
    "weather__forecast",
    "The forecast for a city.",
    {
        "type": "object",
        "properties": {"city": {"type": "string", "format": "uri"}, "days": {"type": "integer"}},
        "required": ["city"],
        "additionalProperties": False,
    },
)
ASK = [UserMessage("Weather in Oslo?")]
PNG = base64.b64encode(b"\x89PNG fake").decode()


@pytest.fixture(autouse=True)
def no_google_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(key, raising=False)


def gemini(api: FakeAPI, **options: Any) -> GeminiModel:
    """`gemini:gemini-test` at the fake, as `--base-url` makes it (quick retries)."""
    options.setdefault("retry_delay", 0.01)
    model = GeminiModel("gemini-test", api_key="g-key", base_url=api.url, **options)
    api.clients.append(GeminiClosing(model.client))
    return model


def results(call_id: str, text: str, *, error: bool = False) -> ToolResults:
    block = {"type": "text", "text": text}
    image = {"type": "image", "mimeType": "image/png", "data": PNG}
    return ToolResults([ToolResult(call_id, [block, image], is_error=error)])


async def test_function_calls_and_responses_round_trip() -> None:
    replies = [
        lambda body: gemini_reply([("weather__forecast", {"city": "Oslo"})], signed=True),
        lambda body: gemini_reply("Sunny in Oslo."),
    ]
    async with FakeAPI(GEMINI_PATH, replies) as api:
        model = gemini(api)
        first = await model.complete("Be brief.", ASK, [FORECAST])
        (call,) = first.tool_calls
        assert (call.name, call.arguments) == ("weather__forecast", {"city": "Oslo"})
        assert first.usage == (7, 3)
        second = await model.complete(
            "Be brief.", [*ASK, first, results(call.id, "9C")], [FORECAST]
        )
    assert second.text == "Sunny in Oslo." and model.name == "gemini:gemini-test"
    path, _, headers = api.seen[0]
    assert path.endswith("/models/gemini-test:generateContent")
    assert headers["x-goog-api-key"] == "g-key"
    body = api.requests[0]
    assert body["systemInstruction"]["parts"][0]["text"] == "Be brief."
    (declaration,) = body["tools"][0]["functionDeclarations"]
    assert declaration["parameters"]["properties"]["city"] == {"type": "STRING"}  # no uri
    assert "additionalProperties" not in declaration["parameters"]
    model_turn, answer = api.requests[1]["contents"][1:]
    sent_call = model_turn["parts"][0]
    assert sent_call["functionCall"] == {"name": "weather__forecast", "args": {"city": "Oslo"}}
    assert base64.b64decode(sent_call["thoughtSignature"]) == SIGNATURE
    response, image = answer["parts"]
    assert response["functionResponse"] == {
        "name": "weather__forecast",
        "response": {"output": "9C\n[image attached below]"},
    }  # Gemini gave the call no id: none goes back
    blob = image["inlineData"]  # the SDK keeps the blob's own key in snake case (both parse)
    assert blob["data"] == PNG and (blob.get("mimeType") or blob.get("mime_type")) == "image/png"


async def test_call_ids_go_back_and_errors_are_marked() -> None:
    replies = [
        lambda body: gemini_reply([("a__x", {}), ("b__y", {"n": 1})], ids=True),
        lambda body: gemini_reply("ok"),
    ]
    async with FakeAPI(GEMINI_PATH, replies) as api:
        model = gemini(api)
        first = await model.complete(None, ASK, [])
        assert [c.id for c in first.tool_calls] == ["fc_0", "fc_1"]
        both = ToolResults(
            [
                ToolResult("fc_0", [{"type": "text", "text": "done"}]),
                ToolResult("fc_1", [{"type": "text", "text": "no"}], is_error=True),
            ]
        )
        await model.complete(None, [*ASK, first, both], [])
    parts = api.requests[1]["contents"][2]["parts"]
    assert [p["functionResponse"] for p in parts] == [
        {"id": "fc_0", "name": "a__x", "response": {"output": "done"}},
        {"id": "fc_1", "name": "b__y", "response": {"error": "no"}},
    ]


async def test_an_error_is_one_line() -> None:
    reply = gemini_error(400, "Invalid JSON payload received.", "INVALID_ARGUMENT")
    async with FakeAPI(GEMINI_PATH, [lambda body: reply]) as api:
        with pytest.raises(Exception) as caught:
            await gemini(api).complete(None, ASK, [FORECAST])
    assert describe_model_error(caught.value) == (
        "gemini API error 400 (the model API rejected the request): Invalid JSON payload received."
    )


async def test_a_rate_limit_is_retried_then_one_line() -> None:
    def limited(body: dict[str, Any]) -> Any:  # a new response each time (one is sent once)
        return gemini_error(429, "Resource has been exhausted.", "RESOURCE_EXHAUSTED")

    replies = [limited, lambda body: gemini_reply("later"), limited, limited, limited]
    async with FakeAPI(GEMINI_PATH, replies) as api:
        model = gemini(api)
        assert (await model.complete(None, ASK, [])).text == "later"
        with pytest.raises(Exception) as caught:
            await model.complete(None, ASK, [])
    assert len(api.requests) == 5  # 2, then 3 attempts in all
    line = describe_model_error(caught.value)
    assert line == (
        "gemini API error 429 (rate limited by the model API: wait and try again): "
        "Resource has been exhausted."
    )


async def test_no_candidate_is_one_line() -> None:
    blocked = {"promptFeedback": {"blockReason": "SAFETY"}}
    async with FakeAPI(GEMINI_PATH, [lambda body: blocked]) as api:
        with pytest.raises(Exception) as caught:
            await gemini(api).complete(None, ASK, [])
    assert describe_model_error(caught.value) == (
        "Gemini answered with no candidate (blocked: SAFETY): rephrase and ask again"
    )


async def test_make_model_reads_the_key_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "from-env")
    async with FakeAPI(GEMINI_PATH, [lambda body: gemini_reply("hi")]) as api:
        model = make_model("gemini:gemini-test", base_url=api.url)
        assert isinstance(model, GeminiModel)
        api.clients.append(GeminiClosing(model.client))
        assert (await model.complete(None, ASK, [])).text == "hi"
    assert api.seen[0][2]["x-goog-api-key"] == "from-env"


async def test_an_unreachable_api_is_one_line() -> None:
    model = GeminiModel("g", api_key="k", base_url=f"http://127.0.0.1:{free_port()}", attempts=1)
    try:
        with pytest.raises(Exception) as caught:
            await model.complete(None, ASK, [])
    finally:
        await model.client.aio.aclose()
    line = describe_model_error(caught.value)
    assert line is not None and line.startswith("cannot reach the gemini API: ")
    assert line.endswith("check the network (or --base-url)")
