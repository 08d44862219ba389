"""The host's context budget end to end, with the real `anthropic` and `openai` SDKs against
loopback fake model APIs, over real server processes: deferred loading over 300+ real tool
definitions, results over the output budget, resource links, user-only content, and server
instructions."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import AsyncIterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from host_support import (
    PROVIDERS,
    FakeAPI,
    RecordingUI,
    api_path,
    free_port,
    images,
    make_model,
    scripted,
    system_text,
    tool_names,
    tool_results,
    wait_port,
)
from mcpkit.host import ConsentPolicy, Host, parse_config
from mcpkit.host.results import IMAGE_MAX_BYTES, IMAGE_MAX_SIDE, image_size
from support import ROOT, ask

SERVERS = ROOT / "tests/servers"
#: Real catalogues served by tests/servers/catalogue_server.py: 301 tools in all.
CATALOGUES = [
    "atlassian",
    "chrome-devtools",
    "github",
    "desktop-commander",
    "firecrawl",
    "playwright",
    "notion",
    "kubernetes",
    "hubspot",
]


def stdio(script: str, *args: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / script), *args], **extra}


def config(servers: dict[str, Any]) -> Any:
    return parse_config({"mcpServers": servers}, env={})


@pytest.fixture
async def catalogue_urls() -> AsyncIterator[dict[str, str]]:
    """The catalogues, each its own Streamable HTTP server, all in one process."""
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(SERVERS / "catalogue_server.py"), "--http", str(port), *CATALOGUES
    )
    await wait_port(port, proc)
    yield {name: f"http://127.0.0.1:{port}/{name}/mcp" for name in CATALOGUES}
    proc.terminate()
    await proc.wait()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_deferred_loading_over_300_real_tools(
    provider: str, catalogue_urls: dict[str, str]
) -> None:
    cfg = config({name: {"type": "http", "url": url} for name, url in catalogue_urls.items()})
    want = "github__create_pull_request"
    pr = {"owner": "octo", "repo": "widgets", "title": "Fix", "head": "fix", "base": "main"}

    def call_found(body: dict[str, Any]) -> Any:
        (found, _), *_ = tool_results(provider, body)
        assert f"\n- {want}: {{" in found  # the search described it, schema and all
        return [("call_found_tool", {"name": want, "arguments": pr})]

    steps: list[Any] = [
        [("search_tools", {"query": "open a pull request on GitHub"})],
        call_found,
        "Pull request opened.",
    ]
    async with FakeAPI(api_path(provider), scripted(provider, steps)) as api:
        host = Host(cfg, model=make_model(provider, api), ui=RecordingUI())
        async with host:
            assert len(host.fleet.catalog()) >= 300
            full = len(json.dumps([asdict(spec) for spec in host.fleet.catalog()]))
            agent = host.agent()
            assert await agent.ask("Open a PR from fix into main in octo/widgets") == (
                "Pull request opened."
            )
    first, second, third = api.requests
    # The first request carries the host's tools and none of the 301 definitions.
    assert set(tool_names(provider, first)) == {"search_tools", "call_found_tool", "read_result"}
    assert want in tool_results(provider, second)[0][0]
    # The call reached the right tool of the right server, with the model's arguments.
    (text, is_error), *_ = tool_results(provider, third)
    assert not is_error and json.loads(text) == {"tool": "create_pull_request", "arguments": pr}
    # Catalogue size per request: a few definitions instead of hundreds.
    assert len(json.dumps(second["tools"])) * 10 < full


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_large_result_is_capped_and_paged(provider: str) -> None:
    cfg = config({"docs": stdio("context_server.py", "docs", trusted=True)})
    seen: dict[str, Any] = {}

    def page_on(body: dict[str, Any]) -> Any:
        (text, _), *_ = tool_results(provider, body)
        note = re.search(
            r'kept as "(r\d+)": call read_result with handle "r\d+" and offset (\d+)', text
        )
        assert note, text[-400:]
        seen["shown"], seen["offset"] = text, int(note.group(2))
        seen["images"] = images(provider, body)
        return [("read_result", {"handle": note.group(1), "offset": int(note.group(2))})]

    steps: list[Any] = [[("docs__big_report", {})], page_on, "Read it all."]
    async with FakeAPI(api_path(provider), scripted(provider, steps)) as api:
        host = Host(cfg, model=make_model(provider, api), ui=RecordingUI())
        async with host:
            await host.agent().ask("Summarise the big report")
    big = "".join(f"line {i:06d} of the big report\n" for i in range(11_000))[:300_000]
    document = f"[resource docs://docs/report]\n{big}"
    offset = seen["offset"]
    # The model saw the start of the 300,000 characters, within the 25,000-token budget...
    assert offset <= 25_000 * 4 and document[:offset] in seen["shown"]
    assert len(json.dumps(api.requests[1])) < 25_000 * 4 + 50_000 + 600_000
    # ...and the image downscaled under the limits (not the 2 MB, 1800x1400 original).
    (image,) = seen["images"]
    size = image_size({"data": image})
    assert size is not None and max(size) <= IMAGE_MAX_SIDE
    assert len(image) * 3 // 4 <= IMAGE_MAX_BYTES
    # read_result returned the following slice, with a note pointing further on.
    (text, is_error), *_ = tool_results(provider, api.requests[2])
    assert not is_error and text.startswith(document[offset : offset + 1000])
    assert f"of {len(document):,}" in text and "next: read_result" in text


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_links_audience_and_instructions(provider: str) -> None:
    cfg = config(
        {
            "docs": stdio("context_server.py", "docs", trusted=True),
            "other": stdio("context_server.py", "other"),
        }
    )
    steps: list[Any] = [
        [("docs__find_docs", {"topic": "greetings"})],
        [("read_resource", {"uri": "docs://docs/guide"})],
        [
            ("read_resource", {"uri": "docs://other/guide", "server": "docs"}),
            ("read_resource", {"uri": "docs://nowhere/else"}),
        ],
        [("docs__account_summary", {})],
        "Done.",
    ]
    ui = RecordingUI()
    async with FakeAPI(api_path(provider), scripted(provider, steps)) as api:
        host = Host(cfg, model=make_model(provider, api), ui=ui, policy=ConsentPolicy())
        async with host:
            await host.agent(system="Be brief.").ask("What do the docs say about greetings?")
    first, after_link, after_read, after_refusals, after_summary = api.requests
    # (e) Instructions of the trusted server only, after the agent's own system prompt.
    prompt = system_text(provider, first)
    assert prompt.startswith("Be brief.") and "DOCS-INSTRUCTIONS" in prompt
    assert "OTHER-INSTRUCTIONS" not in json.dumps(api.requests)
    # (c) The link is offered to the model, which follows it through read_resource...
    (links, _), *_ = tool_results(provider, after_link)
    assert "docs://docs/guide" in links and "read_resource" in tool_names(provider, after_link)
    (guide, guide_err), *_ = tool_results(provider, after_read)
    assert not guide_err and "The docs guide: page 1 says hello." in guide
    # ...and is refused a URI that server never offered (another server's, or nobody's).
    (wrong_server, e1), (nowhere, e2) = tool_results(provider, after_refusals)
    assert e1 and "did not list or link docs://other/guide" in wrong_server
    assert e2 and "no server listed or linked" in nowhere
    # (d) Content for the user only never reaches the model API, but the user sees it.
    (summary, _), *_ = tool_results(provider, after_summary)
    assert "Balance: 42 EUR." in summary
    assert "USER-ONLY" not in json.dumps(api.requests)
    shown = [e for kind, e in ui.events if kind == "user_only"]
    assert "USER-ONLY-SECRET 7731" in json.dumps(shown)
    assert "USER-ONLY-STATEMENT" in json.dumps(shown)


def test_servers_exist() -> None:
    for name in CATALOGUES:
        assert Path(ROOT / f"tests/data/tool_catalogues/{name}.json").is_file()


async def test_catalogue_servers_list_titles_and_hints_as_recorded() -> None:
    # Tool search reads a tool's annotations' title (ToolDoc.from_tool): the recorded servers
    # list it, so `make eval-tools` ranks what a host sees of the real servers.
    sys.path.insert(0, str(SERVERS))
    from catalogue_server import HINTS, catalogue_server

    recorded = json.loads((ROOT / "tests/data/tool_catalogues/hubspot.json").read_text())["tools"]
    listed = {t["name"]: t for t in (await ask(catalogue_server("hubspot"), "tools/list"))["tools"]}
    for tool in recorded:
        want = {k: v for k, v in tool["annotations"].items() if k in HINTS}
        assert want.get("title") and listed[tool["name"]]["annotations"] == want
