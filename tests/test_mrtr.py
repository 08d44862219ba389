"""Multi round-trip requests on the server (CHECKLIST MRTR-*), in-process over HTTP."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from mcpkit import Context, InvalidParams, Server
from mcpkit.server.request_state import MemoryStateStore, StateSealer, generate_key, salient_digest
from support import AsgiClient, meta, rpc

ALL = {"elicitation": {}, "sampling": {}, "roots": {}}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


class Pet(BaseModel):
    name: str
    legs: int = 4


def make_server(**options: Any) -> Server:
    server = Server("mrtr", **options)

    @server.tool()
    async def greet(ctx: Context) -> str:
        """Asks a name."""
        answer = await ctx.elicit("Your name?", NAME, key="user_name")
        if not answer.accepted:
            return f"no name ({answer.action})"
        return f"Hello, {answer.content['name']}!"

    @server.tool()
    async def two_rounds(ctx: Context, tag: str = "") -> str:
        """Two questions, one after the other; counts its own executions in ctx.state."""
        ctx.state["runs"] = ctx.state.get("runs", 0) + 1
        a = await ctx.elicit("First?", NAME)
        b = await ctx.elicit("Second?", NAME)
        return f"{a.content['name']}+{b.content['name']} after {ctx.state['runs']} runs"

    @server.tool()
    async def everything(ctx: Context) -> str:
        """Three questions in one round."""
        pet, reply, roots = await ctx.gather(
            ctx.elicit("Pet?", Pet), ctx.sample("Hi", max_tokens=5), ctx.list_roots()
        )
        return f"{pet.data.name}/{pet.data.legs}|{reply.text}|{[r.uri for r in roots]}"

    @server.tool()
    async def go_to(ctx: Context) -> str:
        """URL mode."""
        answer = await ctx.elicit_url("Sign in to the shop", "https://shop.example.com/connect")
        return answer.action

    @server.prompt()
    async def briefing(ctx: Context) -> str:
        """A prompt that asks first."""
        answer = await ctx.elicit(
            "Topic?", {"type": "object", "properties": {"topic": {"type": "string"}}}
        )
        return f"Brief me on {answer.content['topic']}"

    @server.resource("mrtr://secret")
    async def secret(ctx: Context) -> str:
        answer = await ctx.elicit(
            "Really read it?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        )
        return "the secret" if answer.content and answer.content.get("ok") else "nothing"

    return server


def call(
    name: str,
    arguments: dict[str, Any] | None = None,
    caps: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    msg = rpc("tools/call", {"name": name, "arguments": arguments or {}, **extra})
    msg["params"]["_meta"] = meta(ALL if caps is None else caps)
    return msg


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}


@pytest.fixture
def server() -> Server:
    return make_server()


@pytest.fixture
def http(server: Server) -> AsgiClient:
    return AsgiClient(server.http_app())


async def test_round_trip(http: AsgiClient) -> None:
    first = (await http.post(call("greet"))).result
    assert first["resultType"] == "input_required"  # literally (BASE-07)
    req = first["inputRequests"]["user_name"]
    assert req == {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": "Your name?", "requestedSchema": NAME},
    }
    assert isinstance(first["requestState"], str)
    assert "ttlMs" not in first and "cacheScope" not in first  # CACHE-02
    done = (
        await http.post(
            call(
                "greet",
                inputResponses={"user_name": accept(name="Ada")},
                requestState=first["requestState"],
            )
        )
    ).result
    assert done == {
        **done,
        "resultType": "complete",
        "content": [{"type": "text", "text": "Hello, Ada!"}],
    }


async def test_decline_reaches_the_handler(http: AsgiClient) -> None:
    first = (await http.post(call("greet"))).result
    r = await http.post(
        call(
            "greet",
            inputResponses={"user_name": {"action": "decline"}},
            requestState=first["requestState"],
        )
    )
    assert r.result["content"][0]["text"] == "no name (decline)"  # ELIC-22


async def test_missing_answer_asks_again(http: AsgiClient) -> None:
    first = (await http.post(call("greet"))).result
    again = (
        await http.post(
            call(
                "greet",
                inputResponses={"wrong_key": accept(name="x")},
                requestState=first["requestState"],
            )
        )
    ).result
    assert (
        again["resultType"] == "input_required" and "user_name" in again["inputRequests"]
    )  # MRTR-26


async def test_extra_answers_are_ignored(http: AsgiClient) -> None:
    first = (await http.post(call("greet"))).result
    responses = {"user_name": accept(name="Bo"), "stray": {"action": "accept"}}
    done = (
        await http.post(call("greet", inputResponses=responses, requestState=first["requestState"]))
    ).result
    assert done["content"][0]["text"] == "Hello, Bo!"  # MRTR-25


@pytest.mark.parametrize(
    "responses",
    [
        None,
        {"user_name": 12345},
        {"user_name": {"action": "maybe"}},
        {"user_name": accept(nick="no name")},
        {"user_name": {"action": "accept"}},
    ],
)
async def test_malformed_responses_are_errors(http: AsgiClient, responses: Any) -> None:
    first = (await http.post(call("greet"))).result
    r = await http.post(call("greet", inputResponses=responses, requestState=first["requestState"]))
    assert r.code == -32602  # MRTR-23 / ELIC-31: never a complete result


@pytest.mark.parametrize(
    "mangle",
    [
        lambda s: s + "-TAMPERED",
        lambda s: s[:-10],
        lambda s: "garbage",
        lambda s: s[:4] + ("B" if s[4] == "A" else "A") + s[5:],  # always a change
    ],
)
async def test_tampered_state_is_rejected(http: AsgiClient, mangle: Any) -> None:
    first = (await http.post(call("greet"))).result
    r = await http.post(
        call(
            "greet",
            inputResponses={"user_name": accept(name="x")},
            requestState=mangle(first["requestState"]),
        )
    )
    assert r.code == -32602  # MRTR-09
    assert "result" not in r.json


async def test_state_is_bound_to_its_request(http: AsgiClient) -> None:
    first = (await http.post(call("two_rounds", {"tag": "a"}))).result
    key = next(iter(first["inputRequests"]))
    other_args = await http.post(
        call(
            "two_rounds",
            {"tag": "b"},
            inputResponses={key: accept(name="x")},
            requestState=first["requestState"],
        )
    )
    assert other_args.code == -32602  # MRTR-10: digest of the salient params
    other_tool = await http.post(
        call(
            "greet",
            inputResponses={"user_name": accept(name="x")},
            requestState=first["requestState"],
        )
    )
    assert other_tool.code == -32602


async def test_expired_state() -> None:
    server = make_server(state_ttl_seconds=-1)
    http = AsgiClient(server.http_app())
    first = (await http.post(call("greet"))).result
    r = await http.post(
        call(
            "greet",
            inputResponses={"user_name": accept(name="x")},
            requestState=first["requestState"],
        )
    )
    assert r.code == -32602 and "expired" in r.json["error"]["message"]


def test_state_of_another_principal() -> None:
    sealer = StateSealer([generate_key()])
    params = {"name": "greet", "arguments": {}}
    token = sealer.seal(
        {"m": "tools/call", "d": salient_digest("tools/call", params), "p": "alice"}
    )
    assert sealer.open(
        token, method="tools/call", digest=salient_digest("tools/call", params), owner="alice"
    )
    with pytest.raises(InvalidParams, match="principal"):
        sealer.open(
            token,
            method="tools/call",
            digest=salient_digest("tools/call", params),
            owner="mallory",
        )


async def test_multi_round_and_handler_state(http: AsgiClient) -> None:
    r1 = (await http.post(call("two_rounds"))).result
    (k1,) = r1["inputRequests"]
    r2 = (
        await http.post(
            call(
                "two_rounds", inputResponses={k1: accept(name="A")}, requestState=r1["requestState"]
            )
        )
    ).result
    assert r2["resultType"] == "input_required"
    (k2,) = r2["inputRequests"]
    assert k2 != k1 and r2["requestState"] != r1["requestState"]
    # Answering the second question with the first state restarts at round one.
    stale = (
        await http.post(
            call(
                "two_rounds", inputResponses={k2: accept(name="B")}, requestState=r1["requestState"]
            )
        )
    ).result
    assert list(stale["inputRequests"]) == [k1]
    done = (
        await http.post(
            call(
                "two_rounds", inputResponses={k2: accept(name="B")}, requestState=r2["requestState"]
            )
        )
    ).result
    assert done["content"][0]["text"] == "A+B after 3 runs"


async def test_gather_and_model_schema(http: AsgiClient) -> None:
    first = (await http.post(call("everything"))).result
    reqs = first["inputRequests"]
    assert [r["method"] for r in reqs.values()] == [
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    ]
    assert reqs["elicitation-1"]["params"]["requestedSchema"]["required"] == ["name"]
    answers = {
        "elicitation-1": accept(name="Rex"),
        "sampling-1": {
            "role": "assistant",
            "content": {"type": "text", "text": "hey"},
            "model": "m",
        },
        "roots-1": {"roots": [{"uri": "file:///home"}]},
    }
    done = (
        await http.post(
            call("everything", inputResponses=answers, requestState=first["requestState"])
        )
    ).result
    assert done["content"][0]["text"] == "Rex/4|hey|['file:///home']"


async def test_undeclared_capability_is_32021(http: AsgiClient) -> None:
    r = await http.post(call("greet", caps={"sampling": {}}))
    assert (r.status, r.code) == (400, -32021)  # MRTR-13
    assert r.json["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    r = await http.post(call("go_to", caps={"elicitation": {}}))
    assert r.code == -32021  # ELIC-09: form only, no URL mode
    r = await http.post(call("go_to", caps={"elicitation": {"url": {}}}))
    assert r.result["inputRequests"]["elicitation-1"]["params"]["mode"] == "url"


async def test_prompt_and_resource_can_ask(http: AsgiClient) -> None:
    msg = rpc("prompts/get", {"name": "briefing"})
    msg["params"]["_meta"] = meta(ALL)
    first = (await http.post(msg)).result
    assert first["resultType"] == "input_required"
    msg["params"].update(
        inputResponses={"elicitation-1": accept(topic="tides")}, requestState=first["requestState"]
    )
    done = (await http.post(msg)).result
    assert done["messages"][0]["content"]["text"] == "Brief me on tides"
    read = rpc("resources/read", {"uri": "mrtr://secret"})
    read["params"]["_meta"] = meta(ALL)
    first = (await http.post(read)).result
    assert first["resultType"] == "input_required" and "ttlMs" not in first
    read["params"].update(
        inputResponses={"elicitation-1": accept(ok=True)}, requestState=first["requestState"]
    )
    done = (await http.post(read)).result
    assert done["contents"][0]["text"] == "the secret" and done["cacheScope"] == "private"


async def test_key_rotation() -> None:
    old, new = generate_key(), generate_key()
    a = AsgiClient(make_server(state_keys=[old]).http_app())
    b = AsgiClient(make_server(state_keys=[new, old]).http_app())
    c = AsgiClient(make_server(state_keys=[new]).http_app())
    first = (await a.post(call("greet"))).result
    retry = call(
        "greet", inputResponses={"user_name": accept(name="R")}, requestState=first["requestState"]
    )
    assert (await b.post(retry)).result["content"][0]["text"] == "Hello, R!"  # old keys still open
    assert (await c.post(retry)).code == -32602  # a retired key no longer does


async def test_single_use_state_opt_in() -> None:
    http = AsgiClient(make_server(single_use_state=MemoryStateStore()).http_app())
    first = (await http.post(call("greet"))).result
    retry = call(
        "greet", inputResponses={"user_name": accept(name="Z")}, requestState=first["requestState"]
    )
    assert (await http.post(retry)).result["resultType"] == "complete"
    assert (await http.post(retry)).code == -32602  # MRTR-11: replay refused


async def test_answers_without_state_are_taken(http: AsgiClient) -> None:
    r = await http.post(call("greet", inputResponses={"user_name": accept(name="Eve")}))
    assert r.result["content"][0]["text"] == "Hello, Eve!"


async def test_state_is_not_readable(http: AsgiClient) -> None:
    first = (await http.post(call("two_rounds"))).result
    assert "runs" not in first["requestState"] and "elicitation" not in first["requestState"]
