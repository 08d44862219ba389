"""`make eval-tools`: how well deferred loading finds tools, and what it saves per request.

The recorded catalogues that `eval/servers.json` puts in the evaluation (tests/data/
tool_catalogues: 58 public servers, 1487 real tools, among them GitHub's official server, Linear,
Atlassian, Grafana, PagerDuty, monday.com and Google Workspace with 79 to 198 tools each) are
served behind one `Host`; each labelled request (tests/data/tool_requests.json, 407) is one
conversation with a scripted stand-in for the model (no AI, no network), each catalogue its own
Streamable HTTP server (one process serves them all):

  round 1  the model calls `search_tools` with the request, verbatim;
  round 2  it calls a labelled tool if the search offered one, else the first one offered;
  round 3  it answers.

Requests are split by the server of their first labelled tool: `eval/servers.json` puts each
server in the `tune` split (ranking choices are made on its requests), the `held-out` split
(only reported) or the `blind` split (only reported: catalogues and requests added after the
ranker's choices were made, that no one looks at while tuning). recall@k: share of requests
with a labelled tool among the first k found; MRR: mean of 1/rank of the first labelled tool
(0 when not found). Catalogue tokens per round: o200k_base tokens of the tool definitions in
each model request, averaged over all rounds.

Before that run, each ranker ranks the same tool documents the host indexes, in this process
(`eval/rankers.py`): recall@1/5/10 and MRR per split, BM25 without the nouns of identifier
shapes (written after reading the first requests' misses), the hybrid without the server stage
(the ranker before issue 30), the server stage's weight chosen on the tune split, the
embedding index cold and warm, and query latency p50/p95. The end-to-end run uses the host's
default ranker ("auto"); its held-out and blind recall@5 are the last line.

    .venv/bin/python eval/tool_search.py [--verbose] [--ranker NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import sys
from pathlib import Path
from typing import Any

from rankers import compare_rankers, figures  # eval/rankers.py (the script's folder is on sys.path)

from mcpkit.host import ConsentPolicy, Host, ToolSettings, parse_config
from mcpkit.host.conversation import AssistantMessage, Message, ToolCall, ToolResults, ToolSpec
from mcpkit.host.tokens import EncodingCounter, SpecTokens

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests/data"
SEARCH_LIMIT = 5


class Quiet:
    """A user who allows every call and reads nothing but warnings."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None

    def warn(self, text: str) -> None:
        print(f"warning: {text}", file=sys.stderr)

    async def confirm(self, call: Any) -> bool:
        return True

    async def elicit(self, server: str, request: Any) -> dict[str, Any]:
        return {"action": "decline"}


class EvalModel:
    """The scripted stand-in: search, call, answer; records what each request offered."""

    name = "openai:gpt-4.1"  # the agent counts tokens with this model's encoding (o200k_base)

    def __init__(self, tokens: SpecTokens) -> None:
        self.tokens = tokens
        self.request = ""
        self.labels: set[str] = set()
        self.found: list[str] = []
        self.rounds: list[int] = []

    async def complete(
        self, system: str | None, history: list[Message], tools: list[ToolSpec]
    ) -> AssistantMessage:
        self.rounds.append(self.tokens.total(tools))
        results = [m for m in history if isinstance(m, ToolResults)]
        if not results:
            return AssistantMessage("", [ToolCall("s", "search_tools", {"query": self.request})])
        if len(results) == 1:
            text = results[0].results[0].content[0].get("text", "")
            self.found = re.findall(r"^- (\S+):", text, re.MULTILINE)
            pick = next((f for f in self.found if f in self.labels), None) or next(
                iter(self.found), None
            )
            if pick is not None:
                return AssistantMessage("", [ToolCall("c", pick, {})])
        return AssistantMessage("done")


def splits_of_servers() -> dict[str, str]:
    """Server → split ("tune", "held-out" or "blind"), for the servers the evaluation serves."""
    specs = json.loads((ROOT / "eval/servers.json").read_text())["servers"]
    return {s["name"]: s["split"] for s in specs if s["split"] != "none"}


def names() -> list[str]:
    return sorted(splits_of_servers())


#: The splits in the order they are printed: choices are made on "tune" only; "held-out" and
#: "blind" (catalogues and requests added after the ranker's choices, that nobody tunes on)
#: are only reported.
SPLITS = ("tune", "held-out", "blind")


def split(requests: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The requests by split: that of the server of each one's first labelled tool."""
    of = splits_of_servers()
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in SPLITS}
    for item in requests:
        out[of[item["tools"][0].split("__")[0]]].append(item)
    return out


async def serve(port: int) -> asyncio.subprocess.Process:
    """All catalogues in one process, each its own Streamable HTTP server at /NAME/mcp."""
    script = ROOT / "tests/servers/catalogue_server.py"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), "--http", str(port), *names()
    )
    for _ in range(3600):  # 3 minutes: 58 servers start slowly on a busy machine
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)  # no readiness line to wait for
            continue
        writer.close()
        return proc
    proc.terminate()
    await proc.wait()
    raise RuntimeError("the catalogue server did not start within 3 minutes")


def config(port: int) -> Any:
    url = f"http://127.0.0.1:{port}"
    servers = {name: {"type": "http", "url": f"{url}/{name}/mcp"} for name in names()}
    return parse_config({"mcpServers": servers}, env={})


async def evaluate(verbose: bool, ranker: str) -> dict[str, float]:
    requests = json.loads((DATA / "tool_requests.json").read_text())["requests"]
    tokens = SpecTokens(EncodingCounter("o200k_base"))
    model = EvalModel(tokens)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = await serve(port)
    try:
        return await _evaluate(config(port), requests, model, tokens, verbose, ranker)
    finally:
        server.terminate()
        await server.wait()


async def _evaluate(
    cfg: Any,
    requests: list[dict[str, Any]],
    model: EvalModel,
    tokens: SpecTokens,
    verbose: bool,
    ranker: str,
) -> dict[str, float]:
    ranks: list[int | None] = []
    settings = ToolSettings(search_limit=SEARCH_LIMIT, ranker=ranker)
    async with Host(cfg, model=model, ui=Quiet(), policy=ConsentPolicy(allow=["*"])) as host:
        catalogue = host.fleet.catalog()
        full = tokens.total(catalogue)
        probe = host.agent(tools=settings)
        await probe.tools()
        compare_rankers(list(probe.catalog.docs.values()), split(requests))
        print(f"end to end through the host, ranker {ranker!r}:")
        for item in requests:
            model.request, model.labels, model.found = item["request"], set(item["tools"]), []
            agent = host.agent(tools=settings)
            await agent.ask(item["request"])
            rank = next((i for i, f in enumerate(model.found) if f in model.labels), None)
            ranks.append(rank)
            if verbose and (rank is None or rank > 0):
                print(f"  {rank if rank is not None else '-'}  {item['request']}\n"
                      f"     want {item['tools']}\n     got  {model.found}")  # fmt: skip
    n = len(requests)
    deferred = sum(model.rounds) / len(model.rounds)
    by_split = {
        name: [ranks[requests.index(item)] for item in part]
        for name, part in split(requests).items()
    }
    return {
        "servers": len(host.fleet.links),
        "tools": len(catalogue),
        "requests": n,
        "splits": {k: figures(v) for k, v in by_split.items()},
        "recall@5": {
            name: sum(r is not None and r < 5 for r in by_split[name]) / (len(by_split[name]) or 1)
            for name in ("held-out", "blind")
        },
        "full": full,
        "deferred": deferred,
        "rounds": len(model.rounds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Evaluate search_tools on real catalogues.")
    parser.add_argument("--verbose", "-v", action="store_true", help="list the misses")
    parser.add_argument("--ranker", default="auto", help="the host's ranker (default: auto)")
    args = parser.parse_args()
    r = asyncio.run(evaluate(args.verbose, args.ranker))
    print(f"{r['servers']} servers, {r['tools']} tools, {r['requests']} labelled requests")
    print(
        f"  {'split':<9}{'recall@1':>8} {'recall@5':>8} {'recall@10':>9} {'MRR':>6}  (search limit 5)"
    )
    for name, text in r["splits"].items():
        print(f"  {name:<9}{text}")
    print(
        f"catalogue tokens per round (o200k_base): full {r['full']:,.0f}, deferred "
        f"{r['deferred']:,.0f} over {r['rounds']} rounds ({r['full'] / r['deferred']:.0f}x fewer)"
    )
    print(", ".join(f"{name} recall@5 {value:.3f}" for name, value in r["recall@5"].items()))


if __name__ == "__main__":
    main()
