"""Prompt caching: the tool list stays the same while search finds tools, the Anthropic adapter
marks cache breakpoints, and the fake Anthropic API (tests/prompt_cache.py) reads the cache
back, through the real `anthropic` SDK and the real host over real stdio servers."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from host_support import (
    PROVIDERS,
    SERVERS,
    FakeAPI,
    RecordingUI,
    api_path,
    make_model,
    scripted,
    tool_names,
    tool_results,
)
from mcpkit.host import Host, HostSettings, ToolSettings, parse_config
from mcpkit.host.background_store import BackgroundSettings
from mcpkit.host.models.anthropic import mark_cache
from prompt_cache import PromptCache
from support import scaled

#: A long, fixed system prompt: with the host tools, more than the 1024 tokens the API caches.
SYSTEM = "You are the release assistant of the widgets team.\n" + "\n".join(
    f"Rule {i}: before step {i} of a release, check the branch, the changelog and the reviews, "
    f"and say what you did in one line."
    for i in range(1, 41)
)
PR = {"owner": "octo", "repo": "widgets", "title": "Fix", "head": "fix", "base": "main"}
POST = {"channel_id": "C042", "text": "Fix is up for review."}
#: Five rounds; search adds a tool twice, and each found tool is then called.
FINDS = [
    ("open a pull request on GitHub", "github__create_pull_request", PR),
    ("post a message to a slack channel", "slack__slack_post_message", POST),
]


def config() -> Any:
    script = str(SERVERS / "catalogue_server.py")
    servers = {n: {"command": sys.executable, "args": [script, n]} for n in ("github", "slack")}
    return parse_config({"mcpServers": servers}, env={})


def steps(provider: str, found: str) -> list[Any]:
    """search → call what it found → search → call → answer, the calls as `found` wants."""

    def call(name: str, arguments: dict[str, Any]) -> Any:
        def step(body: dict[str, Any]) -> Any:
            (text, _), *_ = tool_results(provider, body)
            assert name in text  # the search found it (and, described, gave its schema)
            if found == "described":
                assert '"input_schema"' in text
                return [("call_found_tool", {"name": name, "arguments": arguments})]
            assert name in tool_names(provider, body)
            return [(name, arguments)]

        return step

    out: list[Any] = []
    for query, name, arguments in FINDS:
        out += [[("search_tools", {"query": query})], call(name, arguments)]
    return [*out, "The pull request is open and the team knows."]


async def run(
    provider: str, replies: list[Any], tools: ToolSettings, audit: Path, **agent: Any
) -> tuple[FakeAPI, RecordingUI, str]:
    """One turn of an agent on the fake API (with its prompt cache when Anthropic's)."""
    cache = PromptCache() if provider == "anthropic" else None
    # Every server up before the first round, however busy the machine.
    ui, settings = RecordingUI(), HostSettings(audit=audit, startup_timeout=scaled(60))
    async with FakeAPI(api_path(provider), scripted(provider, replies), cache) as api:
        model = make_model(provider, api)
        async with Host(config(), model=model, ui=ui, settings=settings) as host:
            answer = await host.agent(tools=tools, **agent).ask("Open the PR; tell the team.")
    return api, ui, answer


async def converse(provider: str, found: str, tmp_path: Path) -> tuple[FakeAPI, RecordingUI]:
    tools = ToolSettings(budget=1000, found_tools=found)
    audit = tmp_path / f"audit-{found}.jsonl"
    api, ui, answer = await run(provider, steps(provider, found), tools, audit, system=SYSTEM)
    assert answer == "The pull request is open and the team knows."
    return api, ui


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_search_adds_tools_and_the_tool_list_stays_the_same(
    provider: str, tmp_path: Path
) -> None:
    api, ui = await converse(provider, "described", tmp_path)
    assert len(api.requests) == 5
    offered = [tool_names(provider, body) for body in api.requests]
    assert all(tools == offered[0] for tools in offered)  # the same list, in the same order
    assert list(offered[0]) == ["search_tools", "call_found_tool", "read_result"]
    # Each found tool's call was its own call: consent asked, result shown, audited by name.
    for n, (_, name, arguments) in enumerate(FINDS):
        assert ("confirm", name) in ui.events and ("result", (name, False)) in ui.events
        (text, is_error), *_ = tool_results(provider, api.requests[2 + 2 * n])
        assert not is_error and json.loads(text)["arguments"] == arguments
    audit = (tmp_path / "audit-described.jsonl").read_text().splitlines()
    assert [json.loads(line)["tool"] for line in audit] == [
        "create_pull_request", "slack_post_message",
    ]  # fmt: skip
    if provider == "anthropic":
        reports = api.cache.reports if api.cache else []
        assert reports[0]["cache_read_input_tokens"] == 0
        assert reports[0]["cache_creation_input_tokens"] >= reports[0]["tools_and_system"]
        for report in reports[1:]:  # rounds 2-5 read the tools, the system prompt and more
            assert report["cache_read_input_tokens"] > report["tools_and_system"] >= 1024


async def test_host_tools_are_offered_from_the_first_round_so_the_list_never_changes(
    tmp_path: Path,
) -> None:
    """A result the budget cuts (read_result is used) and a call left running in the background
    (the task tools become useful): the host tools were offered from round one, so the list is
    the same every round and each round after the first reads the tools and the system prompt
    from the cache."""
    servers = {
        "github": {
            "command": sys.executable,
            "args": [str(SERVERS / "catalogue_server.py"), "github"],
        },
        "bg": {
            "command": sys.executable,
            "args": [str(SERVERS / "background_server.py")],
            "env": {"BACKGROUND_DIR": str(tmp_path)},
        },
    }
    provider = "anthropic"

    def read_on(body: dict[str, Any]) -> Any:
        (text, _), *_ = tool_results(provider, body)
        assert 'call read_result with handle "r1"' in text  # the budget cut the result
        return [("read_result", {"handle": "r1"})]

    def answer(body: dict[str, Any]) -> Any:
        (text, _), *_ = tool_results(provider, body)
        assert "task" in text  # a handle: the build goes on in the background
        return "The pull request is open and the build runs."

    replies: list[Any] = [
        [("github__create_pull_request", PR)],
        read_on,
        [("bg__build", {"name": "docs"})],
        answer,
    ]
    background = BackgroundSettings(0, tmp_path / "tasks.json")
    settings = HostSettings(startup_timeout=scaled(60), background=background)
    tools = ToolSettings(budget=100_000, result_budget=20)
    async with FakeAPI(api_path(provider), scripted(provider, replies), PromptCache()) as api:
        model = make_model(provider, api)
        config = parse_config({"mcpServers": servers}, env={})
        async with Host(config, model=model, ui=RecordingUI(), settings=settings) as host:
            agent = host.agent(tools=tools, system=SYSTEM)
            assert (await agent.ask("Open the PR, then build the docs.")).startswith("The pull")
            assert agent.background.listed()  # the build was left running
    offered = [list(tool_names(provider, body)) for body in api.requests]
    assert len(offered) == 4 and all(names == offered[0] for names in offered)
    assert offered[0][-3:] == ["read_result", "task_status", "cancel_task"]
    assert api.cache is not None
    reports = api.cache.reports
    for report in reports[1:]:  # every round after the first reads the tools and the system
        assert report["cache_read_input_tokens"] >= report["tools_and_system"] >= 1024


def totals(api: FakeAPI) -> dict[str, int]:
    assert api.cache is not None
    keys = ("cache_read_input_tokens", "cache_creation_input_tokens", "input_tokens")
    return {k: sum(r[k] for r in api.cache.reports) for k in keys}


def cost(usage: dict[str, int]) -> float:
    read, written = usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"]
    return usage["input_tokens"] + 0.1 * read + 1.25 * written


async def test_described_finds_keep_more_cache_than_listed_ones(tmp_path: Path) -> None:
    """The measurement docs/models.md reports (`-s` prints it)."""
    described, _ = await converse("anthropic", "described", tmp_path)
    listed, _ = await converse("anthropic", "listed", tmp_path)
    # Listed: the found tools follow the host's tools, and each search changes the list.
    names = [list(tool_names("anthropic", body)) for body in listed.requests]
    assert names[0] == ["search_tools", "read_result"] and names[1][0] == "search_tools"
    assert "github__create_pull_request" in names[1] and names[1] != names[2 + 1]
    assert listed.cache is not None
    reads = [r["cache_read_input_tokens"] for r in listed.cache.reports]
    assert reads[1] == reads[3] == 0  # after each search: nothing before the change was cached
    assert reads[2] > 0 and reads[4] > 0  # the rounds after: the list as it became
    mine, theirs = totals(described), totals(listed)
    print(
        f"\nprompt cache over 5 rounds: described {mine} cost {cost(mine):,.0f}; listed {theirs} cost {cost(theirs):,.0f}"
    )
    # How much more depends on the size of the tools each search finds (1.9x to 2.2x so far).
    assert mine["cache_read_input_tokens"] > 1.5 * theirs["cache_read_input_tokens"]
    assert mine["cache_creation_input_tokens"] < theirs["cache_creation_input_tokens"]
    # In uncached input tokens at Anthropic's prices (a read 0.1, a write 1.25): 36% less.
    assert cost(mine) < 0.7 * cost(theirs)


async def test_call_found_tool_checks_the_arguments_against_the_schema(tmp_path: Path) -> None:
    provider = "anthropic"
    name, arguments = FINDS[1][1], {"channel_id": "C042"}  # no text
    steps: list[Any] = [
        [("search_tools", {"query": FINDS[1][0]})],
        [("call_found_tool", {"name": name, "arguments": arguments})],
        [("call_found_tool", {"name": "slack__nothing_like_it", "arguments": {}})],
        "I could not post.",
    ]
    api, ui, _ = await run(provider, steps, ToolSettings(budget=1000), tmp_path / "audit.jsonl")
    (wrong, is_error), *_ = tool_results(provider, api.requests[2])
    assert is_error and wrong == (
        f"The arguments do not match {name}'s input schema "
        '(at /: "text" is a required property): fix and retry.'
    )
    (unknown, is_error), *_ = tool_results(provider, api.requests[3])
    assert is_error and "no tool named 'slack__nothing_like_it'" in unknown
    assert ("confirm", name) not in ui.events  # refused before anyone was asked
    assert not (tmp_path / "audit.jsonl").exists() or not (tmp_path / "audit.jsonl").read_text()


def test_breakpoints_mark_last_tool_system_and_the_last_two_rounds() -> None:
    user = {"role": "user", "content": "hello"}
    reply = {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x"}]}
    results = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}
    body = {
        "tools": [{"name": "a"}, {"name": "b"}],
        "system": "Be brief.",
        "messages": [user, reply, results],
    }
    marked = mark_cache(body)
    mark = {"type": "ephemeral"}
    assert marked["tools"] == [{"name": "a"}, {"name": "b", "cache_control": mark}]
    assert marked["system"] == [{"type": "text", "text": "Be brief.", "cache_control": mark}]
    first, middle, last = marked["messages"]
    assert first["content"] == [{"type": "text", "text": "hello", "cache_control": mark}]
    assert middle == reply and last["content"][-1]["cache_control"] == mark
    assert body["messages"][0] == user  # the history is not changed
    alone = mark_cache({"messages": [user]})
    assert "tools" not in alone and "system" not in alone
    assert alone["messages"][0]["content"][0]["cache_control"] == mark


def request(*texts: str, marks: tuple[int, ...] = (-1,)) -> dict[str, Any]:
    """A request of one user message per text, the messages at `marks` marked."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": t}]} for t in texts
    ]
    for i in marks:
        messages[i]["content"][0]["cache_control"] = {"type": "ephemeral"}
    return {"model": "m", "messages": messages}


def test_the_fake_cache_follows_the_documented_rules() -> None:
    now = [0.0]
    cache = PromptCache(minimum=100, clock=lambda: now[0])
    big = "x" * 400  # 101 tokens as a block
    first = cache.usage(request(big))
    assert first["cache_creation_input_tokens"] > 100 and first["input_tokens"] == 0
    # The same prefix, 20 blocks later: read back through the lookback window.
    again = cache.usage(request(big, *["y"] * 20))
    assert again["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    # 21 blocks later: out of the window (the mark on block 21 itself is new).
    far = cache.usage(request(big, *["z"] * 21))
    assert far["cache_read_input_tokens"] == 0
    # A prefix under the minimum is never written; one changed block misses the cache.
    assert cache.usage(request("short"))["cache_creation_input_tokens"] == 0
    assert cache.usage(request("short"))["cache_read_input_tokens"] == 0
    assert cache.usage(request("X" * 400))["cache_read_input_tokens"] == 0
    # Unmarked text after the last mark is plain input; entries expire after the TTL.
    tail = cache.usage(request(big, "tail", marks=(0,)))
    assert tail["cache_read_input_tokens"] > 0
    assert tail["input_tokens"] == 8  # {"type":"text","text":"tail"}: 29 characters
    now[0] = 301.0
    assert cache.usage(request(big))["cache_read_input_tokens"] == 0
    with pytest.raises(ValueError, match="A maximum of 4 blocks with cache_control"):
        cache.usage(request(*"abcde", marks=(0, 1, 2, 3, 4)))
