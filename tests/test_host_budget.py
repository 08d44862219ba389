"""The context-budget parts as plain functions: names, filters and budget, ranking, results."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest

from mcpkit.host import ConfigError, ToolNames, ToolSettings, parse_config
from mcpkit.host.catalog import ToolCatalog
from mcpkit.host.chat import ATTACHMENT, PROMPT, parse_arguments
from mcpkit.host.conversation import ToolSpec
from mcpkit.host.naming import MAX_LEN, alias_for
from mcpkit.host.results import ResultStore, fit, for_assistant
from mcpkit.host.search import BM25Ranker, ToolDoc, split_words
from mcpkit.host.tokens import CharEstimate, EncodingCounter, SpecTokens, counter_for
from support import ROOT

CATALOGUES = ROOT / "tests/data/tool_catalogues"


def catalogue(name: str) -> dict[str, Any]:
    return dict(json.loads((CATALOGUES / f"{name}.json").read_text(encoding="utf-8")))


def test_long_names_stay_readable_with_real_tools() -> None:
    # mcp-atlassian's real tool names under a long config key: every name fits in 64
    # characters, keeps the whole tool name and differs from the others in readable text.
    server = "atlassian-jira-and-confluence-cloud-production"
    tools = [t["name"] for t in catalogue("atlassian")["tools"]]
    names = ToolNames([(server, t) for t in tools])
    aliases = [names.alias(server, t) for t in tools]
    assert len(set(aliases)) == len(tools) and all(len(a) <= MAX_LEN for a in aliases)
    for alias, tool in zip(aliases, tools, strict=True):
        assert alias.endswith(f"__{tool}") and names.resolve(alias) == (server, tool)
    longest = names.alias(server, "confluence_download_content_attachments")
    assert longest == "atlassian-jira-and-conf__confluence_download_content_attachments"
    # A configured alias is used instead of the key; short names are untouched.
    assert alias_for(server, "jira_get_issue", "jira") == "jira__jira_get_issue"
    assert alias_for(server, "jira_get_issue") == f"{server}__jira_get_issue"


def test_hash_only_when_the_tool_name_itself_is_too_long() -> None:
    tool = "x" * 70
    alias = alias_for("srv", tool)
    assert len(alias) == MAX_LEN and alias.startswith("srv__xxx") and alias[-7] == "_"
    # Two servers whose shortened prefixes coincide still get distinct names.
    a, b = "a" * 40 + "-one", "a" * 40 + "-two"
    names = ToolNames([(a, "t" * 40), (b, "t" * 40)])
    assert names.alias(a, "t" * 40) != names.alias(b, "t" * 40)


def test_alias_config() -> None:
    cfg = parse_config({"mcpServers": {"jira-prod": {"url": "http://h/mcp", "alias": "jira"}}})
    assert cfg.servers["jira-prod"].alias == "jira"
    with pytest.raises(ConfigError, match="alias"):
        parse_config({"mcpServers": {"x": {"url": "http://h/mcp", "alias": "no spaces"}}})
    with pytest.raises(ConfigError, match="used twice"):
        parse_config(
            {
                "mcpServers": {
                    "jira": {"url": "http://h/mcp"},
                    "j2": {"url": "http://h/m", "alias": "jira"},
                }
            }
        )


def test_tool_settings_from_config() -> None:
    settings = ToolSettings.from_config(
        {
            "allow": ["github__*"],
            "deny": ["github__delete_*"],
            "budget": 500,
            "alwaysOn": ["github__get_*"],
        }
    )
    assert settings.selects("github__get_issue")
    assert not settings.selects("github__delete_repo") and not settings.selects("slack__post")
    assert ToolSettings.from_config(None) == ToolSettings()
    for bad in ({"budget": 0}, {"allow": "github__*"}, {"alow": []}, []):
        with pytest.raises(ConfigError):
            ToolSettings.from_config(bad)


def real_specs(*names: str) -> tuple[list[ToolSpec], dict[str, ToolDoc]]:
    specs, docs = [], {}
    for name in names:
        for tool in catalogue(name)["tools"]:
            key = f"{name}__{tool['name']}"
            schema = tool.get("inputSchema") or {"type": "object"}
            specs.append(ToolSpec(key, tool.get("description") or "", schema))
            docs[key] = ToolDoc.from_tool(key, name, tool, schema)
    return specs, docs


def test_catalogue_under_budget_is_offered_whole_and_filters_apply() -> None:
    specs, docs = real_specs("git", "time")
    catalog = ToolCatalog(ToolSettings(deny=["git__git_reset"]), SpecTokens(CharEstimate()))
    catalog.update(specs, docs)
    offered = {s.name for s in catalog.offer()}
    assert not catalog.deferred and "git__git_reset" not in offered and len(offered) == 13
    assert not catalog.callable("git__git_reset")


def test_over_budget_defers_and_search_offers_the_matches() -> None:
    specs, docs = real_specs("github", "slack", "git", "kubernetes")
    tokens = SpecTokens(CharEstimate())
    settings = ToolSettings(budget=3000, always_on=["git__git_status"], found_tools="listed")
    catalog = ToolCatalog(settings, tokens)
    catalog.update(specs, docs)
    assert catalog.deferred
    assert [s.name for s in catalog.offer()] == ["git__git_status"]
    found = catalog.search("post a message to a slack channel")
    assert found[0].name == "slack__slack_post_message" and len(found) <= 5
    offered = [s.name for s in catalog.offer()]
    assert offered[0] == "git__git_status" and "slack__slack_post_message" in offered
    assert tokens.total(catalog.offer()) <= settings.budget
    catalog.search("scale a deployment")  # newer finds come first; old ones go when full
    assert "kubernetes__kubectl_scale" in {s.name for s in catalog.offer()}
    assert catalog.callable("github__create_issue")  # loaded or not, a selected tool is callable


def test_described_finds_leave_the_offer_as_it_was() -> None:
    specs, docs = real_specs("github", "slack", "git", "kubernetes")
    settings = ToolSettings(budget=3000, always_on=["git__git_status"])  # "described"
    catalog = ToolCatalog(settings, SpecTokens(CharEstimate()))
    catalog.update(specs, docs)
    assert catalog.describes_found and [s.name for s in catalog.offer()] == ["git__git_status"]
    assert catalog.search("post a message to a slack channel")[0].name == (
        "slack__slack_post_message"
    )
    assert [s.name for s in catalog.offer()] == ["git__git_status"] and catalog.found() == []
    with pytest.raises(ConfigError, match=r"tools\.foundTools: must be one of described"):
        ToolSettings.from_config({"foundTools": "inline"})
    assert ToolSettings.from_config({"foundTools": "listed"}).found_tools == "listed"


def test_ranker_splits_names_and_stems() -> None:
    assert split_words("getPullRequest API-post-search snake_case") == [
        "get", "pull", "request", "api", "post", "search", "snake", "case",
    ]  # fmt: skip
    ranker = BM25Ranker()
    _, docs = real_specs("filesystem", "git")
    ranker.index(list(docs.values()))
    assert ranker.search("make a new folder", 3)[0].key == "filesystem__create_directory"
    assert ranker.search("switch to another branch", 1)[0].key == "git__git_checkout"
    assert ranker.search("rename a file", 1)[0].key == "filesystem__move_file"
    assert ranker.search("zzzz qqqq", 5) == []


def test_token_counts() -> None:
    assert CharEstimate().count("x" * 10) == 3
    assert isinstance(counter_for("anthropic:claude-sonnet-4-5"), CharEstimate)
    exact = counter_for("openai:gpt-4.1")
    assert isinstance(exact, EncodingCounter) and exact.name == "o200k_base"
    assert exact.count("hello world") == 2
    assert counter_for("openai:gpt-4").name == "cl100k_base"


def png(width: int, height: int) -> str:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def test_fit_keeps_user_only_content_from_the_model() -> None:
    user = {"type": "text", "text": "for you", "annotations": {"audience": ["user"]}}
    both = {"type": "text", "text": "for all", "annotations": {"audience": ["user", "assistant"]}}
    fitted = fit([user, both], 100, ResultStore())
    assert fitted.model == [both] and fitted.user_only == [user]
    assert not for_assistant({"type": "resource", "resource": {"annotations": {"audience": []}}})


def test_fit_pages_text_and_keeps_big_images_aside() -> None:
    store = ResultStore()
    text = {"type": "text", "text": "a" * 1000 + "b" * 1000}
    fitted = fit([text], 100, store)  # 100 tokens = 400 characters
    assert fitted.model[0]["text"] == "a" * 400 and fitted.handle == "r1"
    assert 'call read_result with handle "r1" and offset 400' in fitted.model[1]["text"]
    page = store.read("r1", 1500, 1000)
    assert page[0]["text"] == "b" * 500 and "end of r1" in page[1]["text"]
    with pytest.raises(KeyError):
        store.read("r9", 0, 10)
    image = {"type": "image", "data": png(3000, 100), "mimeType": "image/png"}
    small = fit([image], 100_000, store).model[0]
    assert small["type"] == "image" and small["data"] != image["data"]  # downscaled
    note = fit([{"type": "image", "data": "not base64!", "mimeType": "image/png"}], 100, store)
    assert "not valid base64" in note.model[0]["text"]
    aside = fit([image, {"type": "text", "text": "x"}], 100, store)  # too big for the budget
    assert "kept by the host" in json.dumps(aside.model)


def test_chat_syntax() -> None:
    assert PROMPT.match("/docs:greet name=Ann").groups() == ("docs", "greet", "name=Ann")  # type: ignore[union-attr]
    assert parse_arguments('a=1 b="two words"') == {"a": "1", "b": "two words"}
    with pytest.raises(ValueError, match="key=value"):
        parse_arguments("oops")
    found = [m.groups() for m in ATTACHMENT.finditer("see @docs:docs://x/y, not me@mail:z")]
    assert found == [("docs", "docs://x/y,")]


def test_data_is_documented() -> None:
    readme = (CATALOGUES / "README.md").read_text()
    for path in Path(CATALOGUES).glob("*.json"):
        assert path.name in readme
        data = catalogue(path.stem)
        assert data["package"] and data["version"] and data["license"] and data["tools"]
